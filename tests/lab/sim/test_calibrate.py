"""Tests for lab.sim.calibrate.

Fitting profiles to logs: recovers known generating parameters, smooths towards a prior, round-trips to YAML.
"""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from lab.errors import LabInputError
from lab.records import RunRecord, StepRecord, TaskRecord, TrajectoryRecord
from lab.sim.calibrate import fit_profile, graded_answers, profile_to_yaml
from lab.sim.model import SimModel, format_answer, sim_spec
from lab.sim.profiles import AccuracyEntry, OutputLength, Profile, get_profile, load_profiles
from lab.tools.base import ToolContext
from lab.toolspec import LatencyProfile
from lab.world.task import WorldTask

#: Generating parameters the fit must recover (deliberately unlike the defaults).
TRUE = Profile(
    name="truth", stands_for="qwen3-32b", family="qwen3", category="generalist",
    accuracy={
        "hle": AccuracyEntry(without_evidence=0.15, with_evidence=0.45, source="test"),
        "frames": AccuracyEntry(without_evidence=0.40, with_evidence=0.80, source="test"),
        "default": AccuracyEntry(without_evidence=0.30, with_evidence=0.50, source="test"),
    },
    difficulty_logit={"easy": 0.8, "medium": 0.0, "hard": -1.6},
    output_tokens=OutputLength(median_tokens=900, sigma=0.5, source="test"),
    latency=LatencyProfile(base_s=4.0, per_output_token_s=0.02, jitter=0.25),
    latency_source="test",
)
TASKS = [
    WorldTask(task_id=f"{family}-{difficulty}", family=family, domain="general", difficulty=difficulty,
              question=f"A {difficulty} {family} question?", answer=f"Answer {family} {difficulty}",
              evidence=[f"key fact of {family} {difficulty}"])
    for family in ("hle", "frames") for difficulty in ("easy", "medium", "hard")
]


def simulate_run(profile: Profile, tasks: list[WorldTask], per_task: int, run_id: str = "run-real"):
    """Logs as a harness would write them, with `profile` playing the real model.

    Each of `tasks` is asked as `per_task` distinct variants (other ids and questions: a simulated
    model's correctness is a property of the task, so repeats of one task would say little). Every
    trajectory calls a cheap model first, then the fitted model; in half of them a search found the
    task's key fact first and it is in the prompt. Graded on the fitted model's answer. Every fifth
    trajectory ends with another model's answer (outcome 1 regardless) and every third has a later
    failed call; neither may count.
    """
    model, other = SimModel(sim_spec(profile), profile), SimModel.from_profile("qwen3-8b")
    trajectories, steps, variants = [], [], []

    async def go() -> None:
        for base in tasks:
            for i in range(per_task):
                task = base.model_copy(update={"task_id": f"{base.task_id}-{i}",
                                               "question": f"{base.question} (case {i})"})
                variants.append(task)
                key = {"run_id": run_id, "task_id": task.task_id, "sample_idx": 0}
                searched = i % 2 == 0
                ctx = ToolContext(task_id=task.task_id, task=task, seed=i,
                                  findings=list(task.evidence) if searched else [])
                prompt = task.question + (f" Facts: {task.evidence[0]}." if searched else "")
                first = await other.execute({"prompt": task.question}, ctx)
                obs = await model.execute({"prompt": prompt}, ctx)
                calls = [(other.spec, {"prompt": task.question}, first), (model.spec, {"prompt": prompt}, obs)]
                outcome = float(obs.text.endswith("ANSWER: " + format_answer(task.answer, task.answer_type)))
                if i % 5 == 4:
                    calls.append((other.spec, {"prompt": "final check"},
                                  await other.execute({"prompt": "final check"}, ctx)))
                    outcome = 1.0
                turn0 = 0
                if searched:
                    steps.append(StepRecord(**key, turn=0, tool_name="local_search",
                                            arguments_json=json.dumps({"query": "q"}),
                                            observation=f"[1] {task.evidence[0]}"))
                    turn0 = 1
                for turn, (spec, args, o) in enumerate(calls, start=turn0):
                    steps.append(StepRecord(**key, turn=turn, tool_name=spec.name, model=spec.model,
                                            arguments_json=json.dumps(args),
                                            observation=o.text, input_tokens=o.input_tokens,
                                            output_tokens=o.output_tokens,
                                            cost_usd=o.cost_usd, latency_s=o.latency_s, simulated=True))
                if i % 3 == 0:
                    steps.append(StepRecord(**key, turn=turn0 + len(calls), tool_name=other.spec.name,
                                            model=other.spec.model,
                                            error="timeout", latency_s=30.0))
                trajectories.append(TrajectoryRecord(**key, outcome=outcome, n_turns=len(calls)))

    asyncio.run(go())
    task_records = [TaskRecord(benchmark="world", task_id=t.task_id, domain=t.domain, question=t.question,
                               answer_json=json.dumps(t.answer),
                               meta_json=json.dumps({"family": t.family, "difficulty": t.difficulty,
                                                     "evidence": t.evidence}))
                    for t in variants]
    return trajectories, steps, task_records


def frames(trajectories, steps, tasks):
    return tuple(pd.DataFrame([r.model_dump() for r in rows]) for rows in (trajectories, steps, tasks))


@pytest.fixture(scope="module")
def big_logs():
    return frames(*simulate_run(TRUE, TASKS, per_task=800))  # 4800 trajectories of 4800 distinct tasks


def test_graded_answers_are_the_models_last_successful_calls(big_logs):
    samples = graded_answers(*big_logs, model="qwen3-32b")
    assert len(samples) == 6 * 800 * 4 // 5  # every fifth trajectory ended with another model
    assert samples["evidence"].mean() == pytest.approx(0.5, abs=0.01)
    assert graded_answers(*big_logs, model="qwen3-8b").shape[0] == 6 * 800 // 5


def test_fit_recovers_generating_parameters(big_logs):
    fitted = fit_profile(*big_logs, model="qwen3-32b", prior=None)
    for key in ("hle", "frames"):
        for evidence in (False, True):
            true = TRUE.expected_accuracy(key, evidence)
            assert fitted.expected_accuracy(key, evidence) == pytest.approx(true, abs=0.03), (key, evidence)
    assert fitted.difficulty_logit["easy"] == pytest.approx(0.8, abs=0.25)
    assert fitted.difficulty_logit["hard"] == pytest.approx(-1.6, abs=0.25)
    assert fitted.output_tokens.median_tokens == pytest.approx(900, rel=0.05)
    assert fitted.output_tokens.sigma == pytest.approx(0.5, abs=0.03)
    assert fitted.latency.base_s == pytest.approx(4.0, rel=0.15)
    assert fitted.latency.per_output_token_s == pytest.approx(0.02, rel=0.05)
    assert fitted.latency.jitter == pytest.approx(0.25, abs=0.03)
    assert fitted.stands_for == "qwen3-32b"
    assert "3840 graded last answers and 4800 calls" in fitted.calibration_source


def test_few_answers_move_the_profile_only_a_little_towards_the_data():
    prior = get_profile("qwen3-32b")
    hle_medium = [t for t in TASKS if t.task_id == "hle-medium"]
    # 12 trajectories, 10 graded on its answer (two end with another model), all wrong: a raw rate of 0
    traj, steps, tasks = simulate_run(prior.model_copy(update={"accuracy": {**prior.accuracy, "hle": AccuracyEntry(
        without_evidence=0.0001, with_evidence=0.0001, source="always wrong")}}), hle_medium, per_task=12)
    fitted = fit_profile(*frames(traj, steps, tasks), model="qwen3-32b", prior=prior)
    before, after = prior.expected_accuracy("hle", False), fitted.expected_accuracy("hle", False)
    assert 0.5 * before < after < before
    assert fitted.accuracy["frames"].without_evidence == pytest.approx(prior.accuracy["frames"].without_evidence,
                                                                       abs=0.01)
    assert fitted.paper == prior.paper and fitted.name == "qwen3-32b"


def test_profile_yaml_round_trips(tmp_path, big_logs):
    fitted = fit_profile(*big_logs, model="qwen3-32b")
    path = tmp_path / "fitted.yaml"
    path.write_text(profile_to_yaml(fitted))
    loaded = load_profiles(path)["qwen3-32b"]
    for key in fitted.accuracy:
        assert loaded.expected_accuracy(key, True) == pytest.approx(fitted.expected_accuracy(key, True), abs=1e-3)
    assert loaded.latency == fitted.latency and loaded.output_tokens == fitted.output_tokens


def test_model_absent_from_the_logs_is_a_clear_error(big_logs):
    with pytest.raises(LabInputError, match="no successful calls of model 'gpt-5'.*models seen: qwen3-32b, qwen3-8b"):
        fit_profile(*big_logs, model="gpt-5")


def test_calibrate_command_fits_from_a_store(tmp_path):
    from lab.store import Store
    from orchestra.cli.calibrate import calibrate

    # The command on its own Typer group, as `orchestra` registers it (without the other commands).
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("calibrate")(calibrate)

    traj, steps, tasks = simulate_run(get_profile("gpt-5-mini"), TASKS[:3], per_task=40, run_id="eval-1")
    store = Store(tmp_path / "lab.duckdb")
    store.write_run(RunRecord(run_id="eval-1", kind="eval"))
    store.write_tasks(tasks)
    by_key: dict = {}
    for s in steps:
        by_key.setdefault((s.task_id, s.sample_idx), []).append(s)
    store.write_trajectories([(t, by_key[(t.task_id, t.sample_idx)], None) for t in traj])

    out = tmp_path / "mini.yaml"
    result = CliRunner().invoke(app,
                                ["calibrate", "eval-1", "--model", "gpt-5-mini", "--db", str(store.path), "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    fitted = load_profiles(out)["gpt-5-mini"]
    assert fitted.stands_for == "gpt-5-mini" and "prior: profile gpt-5-mini" in fitted.calibration_source
    assert "wrote profile 'gpt-5-mini'" in result.output

    bad = CliRunner().invoke(app, ["calibrate", "eval-404", "--model", "gpt-5-mini", "--db", str(store.path)])
    assert isinstance(bad.exception, LabInputError) and "unknown run 'eval-404'" in str(bad.exception)


def test_a_logged_world_run_carries_what_calibration_needs(tmp_path, world):
    from rich.console import Console

    from lab.eval.config import EvalConfig
    from lab.eval.harness import run_eval
    from lab.store import Store, queries

    store = Store(tmp_path / "c.duckdb")
    (summary,
     ) = run_eval(EvalConfig(benchmark="world", split="test", orchestrator="scripted:always-strongest", limit=20),
                          store, Console(quiet=True))
    samples = graded_answers(queries.trajectories_df(store, [summary.run_id]), queries.steps_df(store, summary.run_id),
                             queries.tasks_df(store), "gpt-5")
    assert len(samples) >= 10 and set(samples.difficulty) <= {"easy", "medium", "hard"}
    # the script pastes what it found, so multi-hop calls to gpt-5 were made with their evidence
    assert samples[samples.family == "frames"].evidence.any()
    assert not samples[samples.family == "hle"].evidence.all()  # reasoning questions have none


def test_paper_toolkit_calls_see_the_context_the_environment_passed():
    """A slot call carries no prompt: the model saw what earlier tools found, and calibration says so."""
    task = TASKS[0]
    key = {"run_id": "paper", "task_id": task.task_id, "sample_idx": 0}
    steps = [
        StepRecord(**key, turn=0, tool_name="search", model="qwen3-32b",
                   arguments_json=json.dumps({"model": "search-3"}),
                   observation=f'search-3 searched for "q":\n[1] {task.evidence[0]}'),
        StepRecord(**key, turn=1, tool_name="answer", model="gpt-5", arguments_json=json.dumps({"model": "answer-1"}),
                   observation="answer-1: ANSWER: x"),
    ]
    bare = [StepRecord(**key, turn=0, tool_name="answer", model="gpt-5",
                       arguments_json=json.dumps({"model": "answer-1"}),
                       observation="answer-1: ANSWER: x")]
    trajs = [TrajectoryRecord(**key, outcome=1.0)]
    record = TaskRecord(benchmark="world", task_id=task.task_id, question=task.question, answer_json='"x"',
                        meta_json=json.dumps({"family": task.family, "difficulty": task.difficulty,
                                              "evidence": task.evidence}))
    with_search = graded_answers(*frames(trajs, steps, [record]), model="gpt-5")
    without = graded_answers(*frames(trajs, bare, [record]), model="gpt-5")
    assert with_search.evidence.tolist() == [True] and without.evidence.tolist() == [False]
