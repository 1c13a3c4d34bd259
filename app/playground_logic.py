"""The Playground's choices and summaries, free of Streamlit so they are tested directly: which
orchestrators a store offers (with the evaluation settings each is played under), what a rollout's route
was, how two plays differ, and how routes spread over samples."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from app.cards import call_label

#: Train-config fields that say how its model is evaluated, as the EvalConfig field each becomes
#: (`trainer.config.OrchestraGRPOConfig.eval_settings`; read from the stored config, the trainer not imported).
_TRAIN_TO_EVAL = {"toolkit": "toolkit", "protocol": "protocol", "context_tokens": "context_tokens",
                  "observation_chars": "observation_chars", "turn_max_new_tokens": "max_new_tokens",
                  "orchestrator_latency_per_token_s": "orchestrator_latency_per_token_s",
                  "temperature": "temperature", "seed": "seed"}


@dataclass(frozen=True)
class Choice:
    """An orchestrator the Playground offers: what the select box shows, its spec, and the evaluation
    config (JSON) it is played under."""

    label: str
    spec: str
    template: str


def orchestrator_choices(runs: pd.DataFrame, configs: dict[str, str]) -> list[Choice]:
    """Every orchestrator the store's evaluations ran, played with the settings of its run named `trained`
    when it has one (the demo's main evaluation of its model, not a sweep point), else of its newest run;
    then trained models of training runs whose folder exists here and that no evaluation ran (the train
    config's settings). The demo's trained model first, privileged scripts last, the rest as first run."""
    evals = runs[runs.kind == "eval"].sort_values("started_at")
    main = evals.assign(_main=evals.name == "trained").sort_values(["_main", "started_at"], kind="stable")
    chosen = main.drop_duplicates("orchestrator", keep="last").set_index("orchestrator")
    order = list(dict.fromkeys(evals.orchestrator))
    choices = [Choice(f"{chosen.name[o] or chosen.run_id[o]} · {o}", o, configs.get(chosen.run_id[o], "{}"))
               for o in order]
    known = {c.spec for c in choices}
    for r in runs[runs.kind == "train"].sort_values("started_at").itertuples():
        config = json.loads(configs.get(r.run_id, "{}") or "{}")
        folder = config.get("output_dir")
        spec = f"hf:{folder}"
        if folder and spec not in known and (Path(folder) / "config.json").is_file():
            choices.append(Choice(f"{r.name or r.run_id} (training run) · {spec}", spec, train_template(config)))
            known.add(spec)
    return sorted(choices, key=lambda c: (c.label.split(" · ")[0] != "trained", c.spec == "scripted:oracle"))


def train_template(train_config: dict[str, Any]) -> str:
    """The evaluation settings of a train config's model (JSON), as the trainer's own evaluations use them."""
    settings = {field: train_config[key] for key, field in _TRAIN_TO_EVAL.items() if key in train_config}
    benchmark = train_config.get("benchmark", "world")
    return json.dumps({"benchmark": benchmark, "split": "test", **settings})


def route(steps: list[Any], models: dict[str, str] | None = None) -> str:
    """A rollout's calls in order, e.g. `search · search-2 (gpt-5-mini) → answer · answer-1 (gpt-5)`;
    a malformed round reads `malformed`."""
    labels = []
    for step in steps:
        if step.kind == "answer":
            continue
        labels.append("malformed" if step.kind == "format_error" else call_label(step, models))
    return " → ".join(labels) or "(no call)"


@dataclass(frozen=True)
class Outcome:
    """What one finished play came to, for the one-line difference and the routes table."""

    solved: bool | None       # None: not graded (a typed question)
    cost_usd: float
    latency_s: float
    rounds: int
    route: str


def difference_line(a: Outcome, b: Outcome, name_a: str = "A", name_b: str = "B") -> str:
    """How B differs from A in one line: the verdict, cost (and its ratio), latency, rounds, and the route
    when it changed."""
    def verdict(o: Outcome) -> str:
        return "not graded" if o.solved is None else ("solved" if o.solved else "not solved")

    ratio = f" ({b.cost_usd / a.cost_usd - 1:+.0%})" if a.cost_usd > 0 else ""
    parts = [f"{name_b} vs {name_a}: {verdict(b)} vs {verdict(a)}",
             f"cost {100 * (b.cost_usd - a.cost_usd):+.3f}¢{ratio}",
             f"latency {b.latency_s - a.latency_s:+.1f} s", f"rounds {b.rounds - a.rounds:+d}"]
    parts.append("same route" if a.route == b.route else "another route")
    return " · ".join(parts)


def routes_table(outcomes: dict[str, list[Outcome]]) -> pd.DataFrame:
    """Per instruction, each route taken over the samples: how often, how often it solved, what it cost."""
    rows = []
    for instruction, plays in outcomes.items():
        counts = Counter(o.route for o in plays)
        for path, n in counts.most_common():
            taken = [o for o in plays if o.route == path]
            graded = [o.solved for o in taken if o.solved is not None]
            rows.append({"instruction": instruction, "route": path, "samples": n, "share": n / len(plays),
                         "solved": (sum(graded) / len(graded)) if graded else None,
                         "¢ per rollout": 100 * sum(o.cost_usd for o in taken) / n,
                         "s per rollout": sum(o.latency_s for o in taken) / n})
    return pd.DataFrame(rows)
