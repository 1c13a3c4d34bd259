"""`orchestra train evidence`: does the trained orchestrator beat its warm start, and does it follow a
cost-saving instruction? Two measurements on the eval split, each from logged runs only, of the policies as
GRPO trains them: sampled at the config's `temperature`, `samples` rollouts per task. Greedy decoding
would measure something else: GRPO moves probabilities, and where the warm start is near indifferent
between two slots (on the CPU config's multi-hop tasks it samples the GPT-5 and the Qwen3-32B answer
slot about equally: its training routes solve them with either) a shift of a few points flips every
greedy choice, so a greedy score swings far more than the policy moved.

The same two measurements decoded greedily (one rollout per task) close the table: a greedy policy
repeats a round that changed nothing, so loops show there first.

1. Preference score (paper Table 3) under the held-out (PI, P) pairs: the trained policy and its warm
   start each run `--preference held-out`; per task both runs' trajectories are normalised together and
   scored under the task's held-out P; the paired bootstrap CI over tasks of trained - warm start.
2. Cost under instructions: the trained policy given the held-out cost-saving wordings (P = outcome 1,
   compute 0.8) against the held-out accuracy-only wordings (P = outcome 1), on the same tasks; the
   saving is 1 - cost(cost-saving) / cost(accuracy-only), with a paired bootstrap CI over tasks; and
   the same with the training pairs' wordings of those two preferences (instructions seen in training),
   for the trained policy and for its warm start, so a saving GRPO lost shows as the warm start's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.report.metrics import paired_cost_saving, paired_preference_scores
from lab.store import Store, queries
from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment
from trainer.sft import warm_start_dir

COST_SAVING = "outcome=1,compute=0.8"
ACCURACY_ONLY = "outcome=1"
#: The training pairs' wordings of the same two preferences (instructions seen in training).
TRAIN_COST_SAVING = "Be accurate but keep the bill as low as you can."
TRAIN_ACCURACY_ONLY = "Get the answer right; money is no object."


@dataclass
class Evidence:
    preference: dict[str, float]
    cost: dict[str, float]
    cost_train_wording: dict[str, float]
    cost_train_wording_warm: dict[str, float]
    greedy_preference: dict[str, float]
    greedy_cost_train_wording: dict[str, float]
    run_ids: dict[str, str]
    samples: int
    temperature: float


def gather_evidence(config: OrchestraGRPOConfig, store: Store, console: Console, limit: int | None = None,
                    samples: int = 2) -> Evidence:
    trained, warm = Path(config.output_dir), warm_start_dir(config)
    for folder in (trained, warm):
        if not (folder / "config.json").is_file():
            raise LabInputError(f"{folder}: no model; run `orchestra train --config ...` (with a warm_start) first")
    if config.temperature <= 0:
        raise LabInputError("temperature: the evidence samples the policy as trained, so it needs a config "
                            f"temperature > 0 (got {config.temperature})")
    environment = TrainingEnvironment(config, split=config.eval_split)
    tasks = list(environment.tasks)[:limit]

    def evaluate(model: Path, preference: str, instruction: str | None = None, greedy: bool = False) -> str:
        sampling = {"samples": 1, "temperature": 0.0} if greedy else {"samples": samples,
                                                                      "temperature": config.temperature}
        eval_config = EvalConfig.build(
            benchmark=config.benchmark, split=config.eval_split, orchestrator=f"hf:{model}", toolkit=config.toolkit,
            tasks=tasks, preferences=[preference], preference_instruction=instruction, max_turns=[config.max_turns],
            **config.eval_settings(), seed=config.seed,
            **sampling, top_p=config.top_p, concurrency=len(tasks) * samples,
            run_name=f"evidence-{'warm' if model == warm else 'trained'}{'-greedy' if greedy else ''}",
        )
        (summary,) = run_eval(eval_config, store, console)
        return summary.run_id

    runs = {"trained held-out": evaluate(trained, "held-out"), "warm start held-out": evaluate(warm, "held-out"),
            "trained cost-saving": evaluate(trained, COST_SAVING),
            "trained accuracy-only": evaluate(trained, ACCURACY_ONLY),
            "trained cost-saving (train wording)": evaluate(trained, COST_SAVING, TRAIN_COST_SAVING),
            "trained accuracy-only (train wording)": evaluate(trained, ACCURACY_ONLY, TRAIN_ACCURACY_ONLY),
            "warm start cost-saving (train wording)": evaluate(warm, COST_SAVING, TRAIN_COST_SAVING),
            "warm start accuracy-only (train wording)": evaluate(warm, ACCURACY_ONLY, TRAIN_ACCURACY_ONLY),
            "trained held-out, greedy": evaluate(trained, "held-out", greedy=True),
            "warm start held-out, greedy": evaluate(warm, "held-out", greedy=True),
            "trained cost-saving (train wording), greedy": evaluate(trained, COST_SAVING,
                                                                    TRAIN_COST_SAVING, greedy=True),
            "trained accuracy-only (train wording), greedy": evaluate(trained, ACCURACY_ONLY,
                                                                      TRAIN_ACCURACY_ONLY, greedy=True)}
    trajs = queries.trajectories_df(store, list(runs.values()))
    features = environment.features
    preference = paired_preference_scores(trajs, runs["trained held-out"], runs["warm start held-out"], features)
    cost = paired_cost_saving(trajs, runs["trained cost-saving"], runs["trained accuracy-only"])
    seen = paired_cost_saving(trajs, runs["trained cost-saving (train wording)"],
                              runs["trained accuracy-only (train wording)"])
    seen_warm = paired_cost_saving(trajs, runs["warm start cost-saving (train wording)"],
                                   runs["warm start accuracy-only (train wording)"])
    greedy = paired_preference_scores(trajs, runs["trained held-out, greedy"],
                                      runs["warm start held-out, greedy"], features)
    greedy_seen = paired_cost_saving(trajs, runs["trained cost-saving (train wording), greedy"],
                                     runs["trained accuracy-only (train wording), greedy"])
    return Evidence(preference=preference, cost=cost, cost_train_wording=seen, cost_train_wording_warm=seen_warm,
                    greedy_preference=greedy, greedy_cost_train_wording=greedy_seen,
                    run_ids=runs, samples=samples, temperature=config.temperature)


def print_evidence(evidence: Evidence, console: Console) -> None:
    p, c = evidence.preference, evidence.cost
    table = Table(title=f"Learning evidence (eval split; sampled at temperature {evidence.temperature:g}, "
                        f"{evidence.samples} rollouts per task)")
    for column in ("measure", "value", "95% CI (paired bootstrap over tasks)", "tasks"):
        table.add_column(column)
    table.add_row("preference score, trained", f"{p['score_a']:.3f}", "", str(p["n_tasks"]))
    table.add_row("preference score, warm start", f"{p['score_b']:.3f}", "", str(p["n_tasks"]))
    table.add_row("trained - warm start", f"{p['diff']:+.3f}",
                  f"[{p['ci_low']:+.3f}, {p['ci_high']:+.3f}]", str(p["n_tasks"]))
    table.add_row("cost per task, cost-saving PI", f"${c['cost_a']:.4f}", "", str(c["n_tasks"]))
    table.add_row("cost per task, accuracy-only PI", f"${c['cost_b']:.4f}", "", str(c["n_tasks"]))
    table.add_row("saving (held-out wordings)", f"{c['saving']:.1%}",
                  f"[{c['ci_low']:.1%}, {c['ci_high']:.1%}]", str(c["n_tasks"]))
    for label, t in (("saving (training wordings)", evidence.cost_train_wording),
                     ("saving (training wordings), warm start", evidence.cost_train_wording_warm)):
        table.add_row(label, f"{t['saving']:.1%}", f"[{t['ci_low']:.1%}, {t['ci_high']:.1%}]", str(t["n_tasks"]))
    g, gc = evidence.greedy_preference, evidence.greedy_cost_train_wording
    table.add_row("greedy: trained - warm start", f"{g['diff']:+.3f} ({g['score_a']:.3f} vs {g['score_b']:.3f})",
                  f"[{g['ci_low']:+.3f}, {g['ci_high']:+.3f}]", str(g["n_tasks"]))
    table.add_row("greedy: saving (training wordings)", f"{gc['saving']:.1%}",
                  f"[{gc['ci_low']:.1%}, {gc['ci_high']:.1%}]", str(gc["n_tasks"]))
    console.print(table)
    for name, run_id in evidence.run_ids.items():
        console.print(f"{name}: {run_id}")
