"""Orchestrator policies: `hf:<path>`, `openai:<model>@<base_url>` (several comma-separated base URLs:
replicas of the model, `lab.tools.replicas`) and `scripted:<name>`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lab.errors import LabInputError
from lab.rollout.engine import Grader
from lab.rollout.policy import Policy
from lab.task import Task
from lab.tools.base import Tool


def policy_names() -> list[str]:
    from lab.policies.scripted import SCRIPTS

    return ["hf:<path>", "openai:<model>@<base_url>[,<base_url>...]",
            *(f"scripted:{n}" for n in [*SCRIPTS, "best-route", "oracle"])]


def make_policy(
    spec: str, pricing: str = "default", tools: dict[str, Tool] | None = None, grader: Grader | None = None,
    task_tools: Callable[[Task], dict[str, Tool]] | None = None,
    temperature: float = 0.0, top_p: float = 1.0, max_new_tokens: int | None = None,
    latency_per_token_s: float | None = None, best_route: dict[str, Any] | None = None,
    tokenizer: str | None = None, provider: str | None = None, family: str | None = None,
) -> Policy:
    """Build the orchestrator named by `spec` (the `--orchestrator` flag).

    `temperature`, `top_p` and `max_new_tokens` (None: the policy's own default) set how `hf:` and
    `openai:` orchestrators sample; scripts ignore them (their randomness is the rollout seed).
    `best_route` holds what `scripted:best-route` measures its routes with: `train_tasks`, `features`
    and `config` (the run's rollout config). `tokenizer`: an `openai:` orchestrator's local tokenizer folder
    (`--orchestrator-tokenizer`); `provider` and `family`: its endpoint's request rules when the URL and the
    model id do not tell them (`lab.providers`)."""
    sampling: dict[str, Any] = {"temperature": temperature, "top_p": top_p}
    kind, _, name = spec.partition(":")
    if kind == "scripted":
        from lab.policies.scripted import SCRIPTS, ScriptedPolicy

        if name == "oracle":
            from lab.policies.oracle import OraclePolicy

            if tools is None or grader is None:
                raise LabInputError("scripted:oracle needs the run's tools and grader")
            return OraclePolicy(tools, grader, task_tools)
        if name == "best-route":
            from lab.policies.best_route import BestRoutePolicy

            if tools is None or grader is None or best_route is None:
                raise LabInputError("scripted:best-route needs the run's tools, grader and train tasks")
            return BestRoutePolicy(tools, grader, task_tools=task_tools, **best_route)
        if name not in SCRIPTS:
            raise LabInputError(f"--orchestrator '{spec}': unknown script (known: "
                                f"{', '.join([*SCRIPTS, 'best-route', 'oracle'])})")
        return ScriptedPolicy(name, SCRIPTS[name])
    if kind == "openai":
        from lab.policies.openai_policy import OpenAIPolicy

        tokens = {} if max_new_tokens is None else {"max_tokens": max_new_tokens}
        return OpenAIPolicy.from_spec(spec, pricing=pricing, tokenizer=tokenizer, provider=provider, family=family,
                                      **sampling, **tokens)
    if kind == "hf":
        from lab.policies.hf_policy import HFPolicy

        tokens = {} if max_new_tokens is None else {"max_new_tokens": max_new_tokens}
        return HFPolicy.from_spec(spec, **sampling, **tokens, latency_per_token_s=latency_per_token_s)
    raise LabInputError(f"--orchestrator '{spec}': expected one of {', '.join(policy_names())}")
