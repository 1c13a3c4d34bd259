"""`orchestra calibrate RUN --model M`: fit a simulated-model profile to a logged run of a real model.

Thin on purpose: the store's named queries give the frames, `lab.sim.calibrate.fit_profile` fits, and
the result is written as a profiles file that `lab.sim.load_profiles` (and toolkits) can read.
"""

from __future__ import annotations

from pathlib import Path

import typer

from lab.sim.calibrate import PRIOR_STRENGTH, fit_profile, profile_to_yaml
from lab.sim.profiles import find_profile_for, get_profile
from orchestra.cli.options import DbOption, console, write_text
from orchestra.cli.root import app


@app.command("calibrate")
def calibrate(
    run_id: str = typer.Argument(..., help="Logged run of the real model to fit (id or name)."),
    model: str = typer.Option(..., "--model", "-m", help="Real model id to fit (e.g. gpt-5-mini)."),
    db: str | None = DbOption,
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Profiles file to write (default: sim_profile_<model>.yaml)."
    ),
    prior: str | None = typer.Option(
        None, "--prior", help="Profile to smooth towards (default: the one standing for the model; 'none': none)."
    ),
    prior_strength: float = typer.Option(
        PRIOR_STRENGTH, "--prior-strength", help="Pseudo-counts of the prior per cell (Beta smoothing)."
    ),
) -> None:
    """Fit accuracy (by domain, difficulty, evidence), output length and latency of MODEL from RUN."""
    from lab.store import Store, queries, resolve_db_path  # the store is only needed by this command

    store = Store(resolve_db_path(db))
    run_id = queries.resolve_run_id(store, run_id)  # an unknown run fails before any work
    base = None if prior == "none" else (get_profile(prior) if prior else find_profile_for(model))
    profile = fit_profile(
        queries.trajectories_df(store, [run_id]), queries.steps_df(store, run_id), queries.tasks_df(store),
        model, prior=base, prior_strength=prior_strength,
    )
    out = out or Path(f"sim_profile_{profile.name}.yaml")
    write_text(out, profile_to_yaml(profile), "--out")
    console.print(f"wrote profile '{profile.name}' ({profile.calibration_source}) to {out}")
