"""The Playground's first-round time and whole-rollout time, measured in one run; prints figures, never asserts.

    orchestra demo --no-app                                    # once: the store and the trained model
    python benchmarks/playground_latency.py --db orchestra.duckdb            # the demo's trained model
    python benchmarks/playground_latency.py --db orchestra.duckdb --tasks 20 --orchestrator scripted:random

What a user waits for, timed as the page sees it: the Playground is built when the page opens (the
benchmark's tasks and the toolkit's tools, once per server: timed apart), then Run starts one rollout per
instruction (the demo's two training instructions, side by side) and the page shows a round as soon as the
rollout's state holds its first step. Per task: the time from Run to the first round on screen, and to the
end of both rollouts. The first task also pays for loading the model (once per server): reported apart.
Goal (issue 40): the first round within 2 s on 2 cores, with the demo's trained model on the offline world.
Run from the folder the demo ran in: its store names the model by a path relative to it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

GOAL_FIRST_ROUND_S = 2.0
INSTRUCTIONS = (("outcome=1", "Get the answer right; money is no object."),
                ("outcome=1,compute=1", "Be accurate but keep the bill as low as you can."))
POLL_S = 0.01


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("orchestra.duckdb"))
    parser.add_argument("--orchestrator", help="Default: the orchestrator of the store's newest `trained` run.")
    parser.add_argument("--tasks", type=int, default=10, help="Tasks played, the first N of the test split.")
    args = parser.parse_args()

    from app.playground_logic import orchestrator_choices
    from lab.eval.playground import Playground, template_config
    from lab.store import Store, queries

    store = Store(args.db, read_only=True)
    runs = queries.runs_summary_df(store)
    raw = queries.runs_df(store)
    choices = orchestrator_choices(runs, dict(zip(raw.run_id, raw.config_json.fillna("{}"))))
    if not choices and not args.orchestrator:
        raise SystemExit(f"{args.db}: no evaluation to take an orchestrator from; run `orchestra demo` first")
    choice = next((c for c in choices if c.spec == args.orchestrator), choices[0] if choices else None)
    spec = args.orchestrator or choice.spec
    template = choice.template if choice else "{}"   # a store without evaluations: the default settings
    started = time.monotonic()
    playground = Playground(template_config(template, spec))
    build_s = time.monotonic() - started
    print(f"orchestrator {spec}; Playground built in {build_s:.1f} s (once per server, when the page opens)")

    firsts, wholes = [], []
    for index, task_id in enumerate(list(playground.tasks)[: args.tasks]):
        task = playground.task(task_id)
        clicked = time.monotonic()
        plays = [playground.start(spec, task, playground.preference(p, text), max_turns=20)
                 for p, text in INSTRUCTIONS]
        while not any(play.state.steps for play in plays) and not all(play.done for play in plays):
            time.sleep(POLL_S)
        first = time.monotonic() - clicked
        for play in plays:
            play.wait()
        whole = time.monotonic() - clicked
        failures = [play.failure for play in plays if play.failure]
        if failures:
            raise SystemExit(f"{task_id}: {failures[0]}")
        rounds = "/".join(str(play.result.trajectory.n_turns) for play in plays)
        print(f"{task_id}: first round {first:.2f} s, both rollouts {whole:.2f} s, rounds {rounds}"
              + (" (loads the model)" if index == 0 else ""))
        if index:  # the first play loads the model: warm figures leave it out
            firsts.append(first)
            wholes.append(whole)
    if firsts:
        median, worst = statistics.median(firsts), max(firsts)
        print(f"first round on screen, warm (n = {len(firsts)}): median {median:.2f} s, max {worst:.2f} s; "
              f"median / goal {median / GOAL_FIRST_ROUND_S:.2f}, max / goal {worst / GOAL_FIRST_ROUND_S:.2f}")
        print(f"both rollouts to the end, warm: median {statistics.median(wholes):.2f} s, max {max(wholes):.2f} s")


if __name__ == "__main__":
    main()
