"""`orchestra demo`: the lab end to end on the offline world (train, evaluate, analyse, show), with no
key, GPU or network.

    orchestra demo                      # ~20 min on 2 cores from an empty cache; a rerun reaches the app in seconds
    orchestra demo --no-app --db demo.duckdb
    orchestra demo --quick --no-app     # every stage at toy size (a first look, the test suite)

Stages (`orchestra.demo.stages`): build or reuse the offline world; evaluate the scripted baselines and the
untrained SmolLM2 on the test tasks; warm-start and train `configs/train/cpu-tiny.yaml` with GRPO;
compare the trained model with its start pair by pair (`trainer.evidence`, every test task x 4 samples
under the training instructions and the held-out pairs); evaluate the warm start and the trained model;
sweep the trained model over three instructions and turn budgets 10 / 20 / 50; then print the findings
(`orchestra.demo.findings`), write the figures, print the commands to try next and serve the dashboard
on the store. The models are simulated stand-ins for the
paper's (`sim:*`, priced at the real models' list prices) and every table says so.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from lab.store import Store, resolve_db_path
from orchestra.cli.dashboard import exec_dashboard
from orchestra.cli.options import DbOption, console
from orchestra.cli.root import app


@app.command("demo")
def demo(
    quick: bool = typer.Option(False, "--quick",
                               help="Every stage at toy size: 6 tasks, 2 GRPO steps, turn budgets 2/4/8 (minutes)."),
    no_app: bool = typer.Option(False, "--no-app", help="Stop after the summary instead of serving the dashboard."),
    port: int = typer.Option(8501, "--port", min=1, max=65535, help="Port of the dashboard."),
    html: Path | None = typer.Option(Path("orchestra-demo.html"), help="Where to write the figures (offline HTML)."),
    db: str | None = DbOption,
) -> None:
    """Train, evaluate, analyse and show: baselines, SmolLM2, a GRPO-trained orchestrator, sweeps, the dashboard."""
    from lab.report.html import report_html, write_report
    from orchestra.demo.findings import gather_findings
    from orchestra.demo.plan import FULL, QUICK
    from orchestra.demo.stages import DemoStages

    progress = Console(stderr=True)
    store = Store(resolve_db_path(db))
    progress.print("[bold]Orchestra Lab demo[/]: offline world, simulated models (sim:*) priced at real list prices, "
                   f"store {store.path}")
    stages = DemoStages(QUICK if quick else FULL, store, progress)
    steps = stages.steps()
    for number, (title, step) in enumerate(steps, start=1):
        progress.rule(f"[{number}/{len(steps) + 1}] {title}")
        step()
    progress.rule(f"[{len(steps) + 1}/{len(steps) + 1}] findings")
    findings = gather_findings(store, stages.runs, stages.plan, stages.found)
    _print_findings(findings, stages.plan)
    if html is not None:
        tables = {"Instructions and the P each stands for": findings.instructions(), **findings.tables()}
        write_report(html, report_html(
            "Orchestra Lab demo", findings.sentences(), tables, findings.figures(),
            notes=["Offline world: every model is simulated (sim:*) and priced at real list prices; the oracle "
                   "reads the grader (a privileged upper bound). 95% CIs are bootstraps over tasks."]))
        console.print(f"figures: {html.resolve()}")
    for hint in _hints(db, store.path, stages, no_app):
        console.print(f"next: {hint}", soft_wrap=True, highlight=False)
    if not no_app:
        exec_dashboard(store.path.resolve(), port, "127.0.0.1")


def _print_findings(findings, plan) -> None:
    from orchestra.demo.plan import PRIVILEGED

    report, names = findings.compared, findings.names
    table = Table(title=f"Test tasks, held-out instructions, {plan.compared_turns} turns "
                        "(simulated tools; the oracle reads the grader)")
    for column in ("run", "accuracy [95% CI]", "¢/task", f"¢ at {report.settings['pricing']}",
                   "s/task", "pref.", "Pareto"):
        table.add_column(column, justify="left" if column == "run" else "right")
    rows = (report.accuracy.merge(report.costs, on="run_id").merge(report.preference, on="run_id", how="left")
            .merge(report.reprice[["run_id", "repriced_cents_per_task"]], on="run_id", how="left")
            .merge(findings.pareto[["run_id", "on_frontier"]], on="run_id", how="left"))
    for r in rows.itertuples():
        table.add_row(names[r.run_id], f"{r.accuracy:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]",
                      f"{r.cost_cents_per_task:.2f}",
                      f"{r.repriced_cents_per_task:.2f}", f"{r.latency_s_per_task:.0f}", f"{r.preference_score:.2f}",
                      "yes" if r.on_frontier is True else "privileged" if names[r.run_id] in PRIVILEGED else "")
    console.print(table)
    orchestrators = report.runs.set_index("run_id").orchestrator
    console.print("runs: " + ", ".join(f"{names[r]} = {orchestrators[r]}" for r in report.run_ids), highlight=False)
    sweep = findings.sweep
    table = Table(title="Trained orchestrator: instruction x turn budget")
    for column in ("instruction", "max turns", "accuracy", "¢/task", "s/task"):
        table.add_column(column, justify="left" if column == "instruction" else "right")
    points = sweep.accuracy.merge(sweep.costs, on="run_id")
    for r in points.assign(name=points.run_id.map(names)).sort_values("name").itertuples():
        instruction, _, turns = r.name.removeprefix("trained-").rpartition("-")
        instruction = (instruction.replace("train-", "") + " (training wording)" if instruction.startswith("train-")
                       else instruction)
        table.add_row(instruction, turns.removeprefix("t"), f"{r.accuracy:.2f}", f"{r.cost_cents_per_task:.2f}",
                      f"{r.latency_s_per_task:.0f}")
    console.print(table)
    if not findings.routing.empty:
        table = Table(title="Share of tool calls: warm start -> trained (GRPO)")
        for column in ("tool (model)", "warm start", "trained", "change"):
            table.add_column(column, justify="left" if column.startswith("tool") else "right")
        for r in findings.routing.itertuples():
            table.add_row(r.tool_label, f"{r.warm_start:.1%}", f"{r.trained:.1%}", f"{r.change:+.1%}")
        console.print(table)
    console.print("[bold]What the demo found[/]")
    for line in findings.sentences():
        console.print(f"- {line}", highlight=False)


def _hints(db: str | None, path: Path, stages, no_app: bool) -> list[str]:
    """Commands that work on this store as printed (runs by name: the CLI resolves a name to its newest run)."""
    from orchestra.demo.plan import trained_name

    where, config = f" --db {path}" if db else "", stages.config
    budgets = " ".join(trained_name("accuracy", t) for t in stages.plan.turn_budgets)
    hints = [
        f"orchestra runs{where}",
        f"orchestra report cascade strongest oracle warm-start trained --pricing deepinfra{where}",
        f"orchestra report {budgets}{where}",
        f"orchestra rescore trained --preference outcome=1,compute=1 --across warm-start --across cascade{where}",
        f"orchestra reprice strongest --pricing deepinfra{where}",
        f"orchestra eval --orchestrator hf:{config.output_dir} --toolkit {config.toolkit} --preference held-out "
        f"{config.eval_flags()} --temperature {config.temperature:g} --max-turns {stages.plan.compared_turns} "
        f"--limit 10{where}",
        f"{'ORCHESTRA_DB=' + str(path.resolve()) + ' ' if db else ''}jupyter lab notebooks/",
    ]
    if no_app:
        hints.append(f"orchestra app{where}")
    return hints
