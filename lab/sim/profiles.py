"""Capability profiles of simulated models: how often each one is right, how much it writes, how long it takes.

A profile stands for one real model (`stands_for`, priced from the real price table). Its accuracy is
parametrised so that every number in `lab/data/sim_profiles.yaml` is a readable accuracy with a source:

    accuracy[key] = {without_evidence: A0, with_evidence: A1}

`A0`/`A1` are the model's *mean* accuracy over the calibration difficulty mix (uniform unless the file
says otherwise) when the task's key facts are absent from / present in its prompt. `key` is looked up
as the task's domain, then its family (hle, frames, tau2), then `default`. Difficulty enters in logit
space through per-profile offsets `difficulty_logit` (medium = 0):

    P(correct | key, difficulty d, evidence e) = sigmoid(a[key, e] + difficulty_logit[d])

where the intercept `a[key, e]` is solved (bisection) so that the mix-weighted mean of that curve equals
`A0` or `A1`. Why this shape: the paper reports one accuracy per model and benchmark, so a mean over
difficulties is the number that can be calibrated; the offsets then spread it over easy/medium/hard
without moving the mean, and the evidence effect is the gap between two calibrated means.

Output length is lognormal (`median_tokens`, `sigma`: mu = ln median). Latency reuses the toolkit's
`LatencyProfile`: (base_s + per_output_token_s * tokens) times a lognormal multiplier of mean 1.

As a judge (`--judge sim:<name>`, `lab.judge`) a profile agrees with the offline world's ground truth
at `judge_agreement[family]` (else `default`): the probability that its verdict equals the model-free
grade of the answer it is shown. The paper publishes no agreement rate for its GPT-5 judge, so the
packaged rates are assumptions (`DEFAULT_JUDGE_AGREEMENT`); a profiles file may set measured ones.
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lab.errors import LabInputError, first_error, read_yaml
from lab.pricing import canonical_model
from lab.toolspec import LatencyProfile

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
#: Assumption: the offline world draws difficulties uniformly; calibrated means are over this mix.
UNIFORM_MIX: dict[str, float] = {"easy": 1 / 3, "medium": 1 / 3, "hard": 1 / 3}
#: Assumption: one difficulty step moves the log-odds by 1.2 (easy ~ x3.3 the odds of medium).
DEFAULT_DIFFICULTY_LOGIT: dict[str, float] = {"easy": 1.2, "medium": 0.0, "hard": -1.2}
DEFAULT_PROFILES_FILE = "data/sim_profiles.yaml"
#: Assumption (no published measurement for the paper's GPT-5 judge): a judge agrees with the ground truth
#: on 95% of FRAMES-like answers (names, dates, numbers) and 90% of HLE-like ones (expert answers whose
#: equivalence is harder to see).
DEFAULT_JUDGE_AGREEMENT: dict[str, float] = {"frames": 0.95, "hle": 0.90, "default": 0.95}


class AccuracyEntry(BaseModel):
    """Mean accuracy over the difficulty mix, without and with the task's evidence in the prompt."""

    model_config = ConfigDict(extra="forbid")

    without_evidence: float = Field(gt=0, lt=1, description="Mean P(correct) when the key facts are missing.")
    with_evidence: float = Field(gt=0, lt=1, description="Mean P(correct) when every key fact is in the prompt.")
    source: str = Field(min_length=1, description="Where both numbers come from (paper cell or `assumption`).")

    @model_validator(mode="after")
    def _evidence_helps(self) -> AccuracyEntry:
        # Evidence never hurts: a model can ignore facts it was given.
        if self.with_evidence < self.without_evidence:
            raise ValueError(
                f"with_evidence ({self.with_evidence}) is below without_evidence ({self.without_evidence})"
            )
        return self


class OutputLength(BaseModel):
    """Lognormal distribution of output tokens (reasoning included, as billed)."""

    model_config = ConfigDict(extra="forbid")

    median_tokens: float = Field(gt=0, description="exp(mu) of the lognormal.")
    sigma: float = Field(ge=0, description="Sigma of log(tokens).")
    source: str = Field(min_length=1)

    @property
    def mu(self) -> float:
        return math.log(self.median_tokens)

    def mean(self) -> float:
        return self.median_tokens * math.exp(self.sigma**2 / 2)


class PaperReference(BaseModel):
    """The paper's numbers for the model used alone (Table 1), in percent, for reports."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="Row key in the paper's Table 1 (e.g. `claude-opus-4.1`).")
    no_tool: dict[str, float | None] = Field(default_factory=dict, description="Table 1 'no tool' row.")
    basic_tools: dict[str, float | None] = Field(default_factory=dict, description="Table 1 'basic tools' row.")
    source: str = Field(min_length=1)


class Profile(BaseModel):
    """One simulated model. See the module docstring for the accuracy parametrisation.

    Frozen: the packaged profiles are loaded once and shared; derive variants with `model_copy(update=...)`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Profile name; the tool is called `sim:<name>`.")
    stands_for: str = Field(description="Real model id it imitates; its real price is charged.")
    family: str = Field(description="Model family (gpt-5, qwen3, llama, ...), for grouping in reports.")
    category: Literal["generalist", "specialist"] = Field(description="Tool category in toolkits.")
    description: str = Field("", description="Capability description shown to the orchestrator.")
    accuracy: dict[str, AccuracyEntry] = Field(description="By domain or family; must contain `default`.")
    difficulty_logit: dict[Difficulty, float] = Field(
        default_factory=lambda: dict(DEFAULT_DIFFICULTY_LOGIT),
        description="Log-odds offset per difficulty (assumption unless fitted).",
    )
    output_tokens: OutputLength
    latency: LatencyProfile = Field(description="base_s + per_output_token_s * tokens, jitter = lognormal sigma.")
    latency_source: str = Field(min_length=1)
    paper: PaperReference | None = Field(None, description="Paper numbers the profile was calibrated to.")
    calibration_source: str = Field("", description="How this profile's numbers were obtained.")
    difficulty_mix: dict[Difficulty, float] = Field(
        default_factory=lambda: dict(UNIFORM_MIX), description="Mix the accuracies are means over."
    )
    judge_agreement: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_JUDGE_AGREEMENT),
        description="As a judge: P(verdict = ground truth) by task family, with `default` "
                    "(assumption unless measured).")

    @model_validator(mode="after")
    def _check(self) -> Profile:
        if "default" not in self.accuracy:
            raise ValueError("accuracy needs a 'default' entry")
        if "default" not in self.judge_agreement:
            raise ValueError("judge_agreement needs a 'default' entry")
        if any(not 0 <= rate <= 1 for rate in self.judge_agreement.values()):
            raise ValueError(f"judge_agreement rates must be in [0, 1], got {self.judge_agreement}")
        missing = [d for d in DIFFICULTIES if d not in self.difficulty_logit]
        if missing:
            raise ValueError(f"difficulty_logit misses {missing}")
        total = sum(self.difficulty_mix.values())
        if total <= 0 or any(w < 0 for w in self.difficulty_mix.values()):
            raise ValueError("difficulty_mix weights must be non-negative and sum to more than 0")
        return self

    # ---- accuracy -------------------------------------------------------------------------------

    def accuracy_key(self, domain: str, family: str) -> str:
        """Which accuracy entry a task uses: its domain, else its family, else `default`."""
        if domain in self.accuracy:
            return domain
        if family in self.accuracy:
            return family
        return "default"

    def p_correct(self, domain: str, family: str, difficulty: str, evidence: bool) -> float:
        """P(correct answer) for a task of this domain/family/difficulty, with or without its evidence."""
        key = self.accuracy_key(domain, family)
        return _sigmoid(self.intercept(key, evidence) + self.difficulty_logit[difficulty])  # type: ignore[index]

    def intercept(self, key: str, evidence: bool) -> float:
        """Log-odds at medium difficulty, solved so the mix-weighted mean hits the entry's accuracy."""
        entry = self.accuracy[key]
        target = entry.with_evidence if evidence else entry.without_evidence
        return _cached_intercept(target, tuple(self.difficulty_logit.items()), tuple(self.difficulty_mix.items()))

    def expected_accuracy(self, key: str, evidence: bool, mix: dict[str, float] | None = None) -> float:
        """Mean accuracy of entry `key` over a difficulty mix (the calibration mix by default)."""
        mix = _normalised(mix or self.difficulty_mix)
        a = self.intercept(key, evidence)
        return sum(w * _sigmoid(a + self.difficulty_logit[d]) for d, w in mix.items())  # type: ignore[index]

    def judge_agreement_for(self, family: str) -> float:
        """As a judge: how often the verdict on a task of this family equals the ground truth."""
        return self.judge_agreement.get(family, self.judge_agreement["default"])

    # ---- length and latency ---------------------------------------------------------------------

    def expected_latency_s(self) -> float:
        """Mean seconds per call: the multiplier has mean 1, so only the token mean matters."""
        return self.latency.expected(0) + self.latency.per_output_token_s * self.output_tokens.mean()


class ProfileFile(BaseModel):
    """The whole profiles file."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    calibration_source: str = Field(min_length=1, description="How the file's numbers were obtained.")
    difficulty_mix: dict[Difficulty, float] = Field(default_factory=lambda: dict(UNIFORM_MIX))
    profiles: dict[str, dict[str, Any]]


def solve_intercept(target: float, offsets: dict[str, float], mix: dict[str, float]) -> float:
    """The `a` with sum_d w_d * sigmoid(a + offset_d) == target (monotone in `a`, so bisection).

    A symmetric spread around a mean of one half leaves medium at one half; lower means move it down:

    >>> offsets = {"easy": 1.0, "medium": 0.0, "hard": -1.0}
    >>> round(_sigmoid(solve_intercept(0.5, offsets, UNIFORM_MIX)), 6)
    0.5
    >>> round(_sigmoid(solve_intercept(0.2, offsets, UNIFORM_MIX)), 3)
    0.171
    """
    weights = _normalised(mix)

    def mean(a: float) -> float:
        return sum(w * _sigmoid(a + offsets[d]) for d, w in weights.items())

    lo, hi = -30.0, 30.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if mean(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@lru_cache(maxsize=4096)
def _cached_intercept(target: float, offsets: tuple[tuple[str, float], ...],
                      mix: tuple[tuple[str, float], ...]) -> float:
    # Keyed by the numbers themselves, so copies of a profile with other numbers never share a result.
    return solve_intercept(target, dict(offsets), dict(mix))


def load_profiles(path: str | Path | None = None) -> dict[str, Profile]:
    """Every profile of a file (the packaged `lab/data/sim_profiles.yaml` by default), validated."""
    if path is None:
        return dict(_packaged_profiles())
    return _load(Path(path))


def get_profile(name: str, path: str | Path | None = None) -> Profile:
    """One profile by name (`sim:` prefix allowed); unknown names are a user error listing the known ones."""
    profiles = load_profiles(path)
    key = name.removeprefix("sim:")
    if key not in profiles:
        raise LabInputError(f"unknown simulated model '{name}' (profiles: {', '.join(sorted(profiles))})")
    return profiles[key]


def find_profile_for(model: str, path: str | Path | None = None) -> Profile | None:
    """The profile standing for a real model id, or named like it; None when there is none."""
    profiles = load_profiles(path)
    key = canonical_model(model)
    if key in profiles:
        return profiles[key]
    return next((p for p in profiles.values() if canonical_model(p.stands_for) == key), None)


def paper_reference(model: str, path: str | Path | None = None) -> dict[str, Any]:
    """The paper numbers a profile was calibrated to (Table 1, percent), or {} where the paper has none.

    `model` is a profile name or the real model id it stands for.
    """
    profile = find_profile_for(model.removeprefix("sim:"), path)
    if profile is None or profile.paper is None:
        return {}
    return profile.paper.model_dump()


# ---- loading --------------------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Profile]:
    return parse_profiles(read_yaml(path, "profiles file"), source=str(path))


def parse_profiles(raw: Any, source: str = "<profiles>") -> dict[str, Profile]:
    """Validate a parsed profiles document; every problem is one line naming the file and field."""
    if not isinstance(raw, dict):
        raise LabInputError(f"{source}: a profiles file is a mapping with 'calibration_source' and 'profiles'")
    try:
        doc = ProfileFile.model_validate(raw)
    except ValidationError as exc:
        raise LabInputError(f"{source}: {first_error(exc)}") from None
    profiles: dict[str, Profile] = {}
    for name, entry in doc.profiles.items():
        if not isinstance(entry, dict):
            raise LabInputError(f"{source}: profiles.{name}: must be a mapping")
        entry = {"difficulty_mix": doc.difficulty_mix, **entry, "name": name}
        try:
            profiles[name] = Profile.model_validate(entry)
        except ValidationError as exc:
            raise LabInputError(f"{source}: profiles.{name}.{first_error(exc)}") from None
    return profiles


@lru_cache(maxsize=1)
def _packaged_profiles() -> dict[str, Profile]:
    resource = resources.files("lab").joinpath(DEFAULT_PROFILES_FILE)
    return _load(Path(str(resource)))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _normalised(mix: dict[str, float]) -> dict[str, float]:
    total = sum(mix.values())
    return {d: w / total for d, w in mix.items()}
