"""Simulated models for the offline world: profiles (data), the `SimModel` tool, and fitting profiles to logs."""

from lab.sim.calibrate import calibration_table, fit_profile, profile_to_yaml
from lab.sim.model import SimModel, estimate_tokens, sim_spec
from lab.sim.profiles import (
    AccuracyEntry,
    OutputLength,
    Profile,
    find_profile_for,
    get_profile,
    load_profiles,
    paper_reference,
)

__all__ = [
    "AccuracyEntry",
    "OutputLength",
    "Profile",
    "SimModel",
    "calibration_table",
    "estimate_tokens",
    "find_profile_for",
    "fit_profile",
    "get_profile",
    "load_profiles",
    "paper_reference",
    "profile_to_yaml",
    "sim_spec",
]
