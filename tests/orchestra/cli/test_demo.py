"""`orchestra demo` (the README's main job): every stage runs offline, the summary says what was found,
every "next:" hint works on the demo's store as printed, and a second demo redoes nothing."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from lab.store import Store, queries
from orchestra.cli.dashboard import free_port, wait_healthy
from orchestra.demo.plan import BASELINES, QUICK, SWEEP_PREFERENCES, trained_name
from tests.conftest import orchestra

#: The first test to ask for `quick_demo` runs it: the offline world from an empty cache (about 2 minutes on 2
#: cores) and every stage of the demo, about 4 minutes in all.
pytestmark = pytest.mark.timeout(600)

NAMES = [*BASELINES, "smollm2", "warm-start", "trained",
         *(trained_name(p, t) for p in SWEEP_PREFERENCES for t in QUICK.turn_budgets)]


def test_demo_logs_every_stage_as_named_runs_on_the_same_tasks(quick_demo):
    runs = queries.runs_summary_df(Store(quick_demo.db, read_only=True))
    evals = runs[runs.kind == "eval"]
    assert set(NAMES) <= set(evals.name)
    named = evals[evals.name.isin(NAMES)].set_index("name")
    assert (named.status == "finished").all()
    assert named.trajectories.drop("smollm2").eq(QUICK.tasks).all()
    assert named.trajectories["smollm2"] == QUICK.smollm2_tasks
    trajectories = queries.trajectories_df(Store(quick_demo.db, read_only=True), list(named.run_id))
    tasks = trajectories.groupby("run_id").task_id.apply(frozenset).rename(index=dict(zip(named.run_id, named.index)))
    assert tasks.drop("smollm2").nunique() == 1 and tasks["smollm2"] < tasks["cascade"]  # like with like
    assert named.orchestrator["smollm2"] == "hf:smollm2"
    assert set(named.orchestrator[named.index.str.startswith("trained")]) == {"hf:runs/cpu-tiny-quick"}
    train = runs[runs.kind == "train"]
    assert len(train) == 1 and train.status.iloc[0] == "finished"
    assert len(queries.train_metrics_df(Store(quick_demo.db, read_only=True), train.run_id.iloc[0])) == 2
    linked = queries.linked_evals_df(Store(quick_demo.db, read_only=True), train.run_id.iloc[0])
    assert sorted(linked.train_step) == [0] * 2 + [1] * 2 + [2] * 2  # the curve: 2 instructions at steps 0, 1, 2
    # both models under 2 instructions, the held-out pairs, the 2 held-out wordings (the contrast's) and the
    # training pair under held-out prices and a held-out tool subset, and the 5 fair baselines under the
    # contrast's 4 instructions (training and held-out wordings)
    evidence = evals[evals.name.str.startswith("evidence-")]
    assert sorted(evidence.name.value_counts().items()) == [("evidence-baseline", 20), ("evidence-start", 9),
                                                            ("evidence-trained", 9)]
    assert set(evidence.pricing) == {"default", "deepinfra"}
    assert (evidence.trajectories == QUICK.evidence_tasks * QUICK.evidence_samples).all()


#: What a library prints when it is let through: a tqdm bar or its redraw, a raw Trainer log dict, a
#: Python warning with its source line.
LIBRARY_NOISE = re.compile(r"\d+it/s\]|it/s\]|examples/s\]|s/it\]|\|[█▏▎▍▌▋▊▉ ]+\||"
                           r"\{'(loss|train_runtime)'|\w+Warning: |warnings\.warn\(")


def test_the_demos_whole_output_from_an_empty_cache_reads_like_a_report(quick_demo):
    """World build, SmolLM2's conversion, SFT and GRPO included: the lab's progress and tables only."""
    for stream in (quick_demo.stdout, quick_demo.stderr):
        noise = [line for line in stream.splitlines() if LIBRARY_NOISE.search(line)]
        assert not noise, noise[:5]
    assert "[1/8] offline world" in quick_demo.stderr and "indexing" in quick_demo.stderr  # it did build the world
    assert "SFT " in quick_demo.stderr and "GRPO " in quick_demo.stderr  # the lab's own lines for both trainers


def test_demo_prints_the_comparison_the_sweep_and_its_findings(quick_demo):
    out = quick_demo.stdout
    for heading in ("Test tasks, held-out instructions", "Trained orchestrator: instruction x turn budget",
                    "What the demo found", "Pareto frontier", "Preference: told to save money",
                    "Under deepinfra's prices", "Learning curve of the training run",
                    "Instruction following along training (cost-saving vs accuracy-only, ",
                    "Curve under 'Be accurate but keep the bill as low as you can.': U ",
                    f"GRPO against its start ({QUICK.evidence_tasks} test tasks x {QUICK.evidence_samples} samples",
                    "Check, U higher under the training instructions, pooled over 2 (trained): ",
                    "Check, saving against the start under 'Be accurate but keep the bill as low as you can.'"):
        assert heading in out, heading
    # the best fair baseline beside the headline (a long sentence: the console may wrap it anywhere)
    assert "Best fair baseline: " in " ".join(out.split())
    assert "scripted:oracle" in out and "hf:smollm2" in out
    # the findings lead with instruction following, in the training and the held-out wordings
    found = out[out.index("What the demo found"):]
    assert found.index("Instruction following (training wording)") < found.index("Instruction following (held-out "
                                                                                 "wording)") < found.index("Pareto")
    # and under prices and tools training never drew (the paper's unseen configurations)
    flat = " ".join(found.split())
    assert "Instruction following (training wording, held-out prices (deepinfra))" in flat
    assert "Instruction following (training wording, held-out tools (without " in flat
    html = (quick_demo.cwd / "demo.html").read_text()
    assert html.count("<section") >= 6 and '<section id="learning_curve">' in html
    assert '<section id="instruction_following_curve">' in html
    assert '<section id="grpo_against_start">' in html and "<h2>Instruction following: contrast" in html
    # a report a person reads: findings, the P of each instruction and tables before the figures, runs by name
    assert html.index("<h2>Findings</h2>") < html.index("<h2>Instructions and the P each stands for</h2>") \
        < html.index("<h2>Compared systems") < html.index("<h2>Figures</h2>")
    assert "<td>outcome=1,compute=1</td>" in html and "<td>trained</td>" in html
    assert len(html.encode()) < 1_000_000 and (quick_demo.cwd / "plotly.min.js").is_file()


def test_every_next_hint_works_on_the_demo_store(quick_demo, tmp_path):
    hints = [line.removeprefix("next: ") for line in quick_demo.stdout.splitlines() if line.startswith("next: ")]
    assert any(h.startswith("orchestra report") for h in hints) and any("rescore" in h for h in hints)
    db = tmp_path / "demo.duckdb"
    shutil.copy(quick_demo.db, db)
    shutil.copytree(quick_demo.cwd / "runs", tmp_path / "runs")  # the hints name the demo's model folder
    for hint in hints:
        args = shlex.split(hint.replace(str(quick_demo.db), str(db)))
        if "jupyter" in args or args[:2] == ["orchestra", "app"]:  # servers: started by their own tests
            continue
        assert args[0] == "orchestra", hint
        done = orchestra(*args[1:], cwd=tmp_path)
        assert done.returncode == 0, (hint, done.stderr[-2000:])


def test_a_second_demo_reuses_everything_and_ends_serving_the_dashboard(quick_demo, tmp_path):
    db = tmp_path / "demo.duckdb"
    shutil.copy(quick_demo.db, db)
    shutil.copytree(quick_demo.cwd / "runs", tmp_path / "runs")  # the demo's model folder, where it left it
    before = queries.runs_summary_df(Store(db, read_only=True)).set_index("run_id").trajectories
    port = free_port()
    log = tmp_path / "stderr.txt"  # a file, not a pipe: nobody reads a pipe while the server runs
    server = subprocess.Popen([sys.executable, "-c", "from orchestra.cli import main; main()",
                               "demo", "--quick", "--db", str(db), "--port", str(port),
                               "--html", str(tmp_path / "d.html")], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
                              env={**os.environ, "ORCHESTRA_CACHE": str(quick_demo.cache)})
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server, timeout_s=300)
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    err = log.read_text()
    after = queries.runs_summary_df(Store(db, read_only=True)).set_index("run_id").trajectories
    assert after.sort_index().equals(before.sort_index())  # no new run, no new rollout
    assert "training: reusing runs/cpu-tiny-quick" in err
    assert "What the demo found" in out and f"dashboard on {db.resolve()}: http://127.0.0.1:{port}" in out
