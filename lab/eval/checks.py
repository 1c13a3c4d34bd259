"""Everything about an evaluation that can be refused before any work: one load of the toolkit, one check.

`checked_toolkit(config)` is the one place an evaluation's toolkit is loaded and its flags checked
against it: the LLM flags (`--user`, `--judge`), the round protocol's toolkit and catalog, the retrieval
depth, every `--preference`, each endpoint's provider contract (`lab.providers`: a setting the model would
refuse, a provider or model it cannot place) and, last, every endpoint itself (`lab.tools.endpoints`: one
`GET /models` each). It runs before tasks, models or indexes load and before a store is
opened (`orchestra eval` calls it before it opens the store), so a refused command has created
nothing, and the toolkit's notes on tools it left out are shown only for a command that goes on.
"""

from __future__ import annotations

from rich.console import Console

from lab.benchmarks import find_source
from lab.errors import LabInputError
from lab.eval.config import EvalConfig
from lab.policies.openai_policy import OpenAIPolicy
from lab.preference import task_preferences
from lab.rollout.rounds import check_catalog
from lab.toolkit import load_toolkit, with_retrieval_top_k
from lab.tools.endpoints import Endpoint, check_endpoints
from lab.tools.experts import budget_problem, family_of
from lab.tools.openai_llm import OpenAIChatTool
from lab.toolspec import Toolkit, ToolSpec


def checked_toolkit(config: EvalConfig, console: Console | None = None) -> Toolkit:
    """The toolkit `config` names, with every check of `check_before_work` passed; the toolkit's notes
    (tools left out for a missing key or package) go to `console` only after the checks pass."""
    notes = console or Console(stderr=True)
    with notes.capture() as held:  # a refused command says one line and nothing else
        toolkit = load_toolkit(config.toolkit, pricing=config.pricing, console=notes)
    check_before_work(config, toolkit)
    unchecked = check_endpoints(model_endpoints(config, toolkit))
    if held.get():
        notes.file.write(held.get())
    for line in [*unchecked, *run_notices(config, toolkit)]:
        notes.print(f"[yellow]{line}[/yellow]", highlight=False, soft_wrap=True)
    return toolkit


def check_before_work(config: EvalConfig, toolkit: Toolkit) -> None:
    """Everything about `config` that can be refused without loading tasks, models or indexes, or opening
    a store: the LLM flags, the round protocol's toolkit and catalog, the retrieval depth, and every
    `--preference` against the toolkit's features. A refused command has then created nothing."""
    check_llm_flags(config, toolkit)
    model_endpoints(config, toolkit)  # builds each client once: a request its model would refuse stops here
    if config.protocol == "rounds":
        check_round_toolkit(toolkit, config.catalog)
    if config.expert_protocol == "released":
        check_expert_budgets(config, toolkit)
    with_search_depth(config, toolkit)
    for preference, _ in config.variants():
        task_preferences(preference, toolkit.feature_names, config.preference_instruction, toolkit.feature_models())


def check_llm_flags(config: EvalConfig, toolkit: Toolkit) -> None:
    """Refuse, before any work, a `--user` or `--judge` that is not an LLM tool of the toolkit, and a
    simulated judge of a benchmark whose answers it does not know (all but the offline world's)."""
    if config.user != "scripted":
        llm_tool_spec(toolkit, config.user, "--user")
    if (config.judge and llm_tool_spec(toolkit, config.judge, "--judge").simulated
            and not find_source(config.benchmark).simulated_judge):
        raise LabInputError(f"--judge {config.judge!r}: a simulated judge knows only the offline world's answers; "
                            f"judge {config.benchmark} with a real model tool (backend kind openai or local_llm)")


def llm_tool_spec(toolkit: Toolkit, name: str, flag: str) -> ToolSpec:
    """The spec of the LLM tool `name` of the toolkit, for a flag that names one (`--user`, `--judge`, `--llm`)."""
    spec = next((s for s in toolkit.tools if s.name == name), None)
    if spec is None or not spec.model:
        llms = ", ".join(s.name for s in toolkit.tools if s.model) or "none"
        raise LabInputError(f"{flag} {name!r}: not an LLM tool of toolkit '{toolkit.name}' (its LLM tools: {llms})")
    return spec


def model_endpoints(config: EvalConfig, toolkit: Toolkit) -> list[Endpoint]:
    """Every OpenAI-compatible endpoint the run will call: an `openai:` orchestrator, each `openai` tool and
    slot of the toolkit (the judge and the user among them). Building each client places its provider
    contract, so a provider or model the lab cannot place, or a setting the model refuses, is a
    `LabInputError` here, before any call."""
    endpoints = []
    if config.orchestrator.startswith("openai:"):
        policy = OpenAIPolicy.from_spec(config.orchestrator, pricing=config.pricing, temperature=config.temperature,
                                        top_p=config.top_p, provider=config.orchestrator_provider,
                                        family=config.orchestrator_family)
        endpoints.append(Endpoint("--orchestrator", policy.replicas.urls, policy.model, policy.api_key_env))
    roles = {config.judge: " (--judge)", config.user: " (--user)"}
    models = [(f"tool '{spec.name}'{roles.get(spec.name, '')}", spec) for spec in toolkit.tools]
    models += [(f"slot '{slot}' of tool '{spec.name}'", model) for spec, slot, model in _slots(toolkit)]
    for role, spec in models:
        if spec.backend.get("kind") == "openai":
            tool = OpenAIChatTool(spec)
            endpoints.append(Endpoint(role, tuple(tool.urls), tool.backend.model, tool.backend.api_key_env))
    return endpoints


def check_round_toolkit(toolkit: Toolkit, catalog: str | None) -> None:
    """Refuse, before any rollout, a toolkit the round protocol cannot end a task with."""
    if not any(spec.name == "answer" for spec in toolkit.tools):
        raise LabInputError(f"--protocol rounds: toolkit '{toolkit.name}' has no `answer` tool, and only `answer` "
                            "ends a task under the round protocol (use a slot toolkit: paper, paper-small)")
    if catalog:
        check_catalog(catalog, list(toolkit.tools))


def retrieval_top_k_for(config: EvalConfig) -> int | None:
    """Documents each `search` retrieves: `--retrieval-top-k`, else under the round protocol the released
    depth of the benchmark (FRAMES 150, HLE 50), else None (the toolkit's own `top_k`)."""
    if config.retrieval_top_k is not None:
        return config.retrieval_top_k
    return find_source(config.benchmark).released_top_k if config.protocol == "rounds" else None


def with_search_depth(config: EvalConfig, toolkit: Toolkit) -> Toolkit:
    """The toolkit whose `search` tools retrieve `retrieval_top_k_for(config)` documents (under rounds, kept by
    the benchmark's released filters: HLE's 100 characters and 0.1 score); an explicit
    `--retrieval-top-k` on a toolkit without such a tool is refused, a released default skips it."""
    top_k = retrieval_top_k_for(config)
    filters = find_source(config.benchmark).released_filters if config.protocol == "rounds" else {}
    if config.retrieval_whitelist is not None:  # --retrieval-whitelist over the benchmark's released scope
        filters = {**filters, "whitelist_scope": config.retrieval_whitelist}
    deeper = with_retrieval_top_k(toolkit, top_k, **filters) if top_k is not None else None
    if deeper is None and config.retrieval_top_k is not None:
        raise LabInputError(f"--retrieval-top-k {config.retrieval_top_k}: toolkit '{toolkit.name}' has no "
                            "`search` tool retrieving from a local index "
                            "(backend.retriever.kind: local_search; e.g. --toolkit paper)")
    return deeper or toolkit


def _slots(toolkit: Toolkit) -> list[tuple[ToolSpec, str, ToolSpec]]:
    """(paper tool, slot, slot model) of every slot of the toolkit's paper tools."""
    return [(spec, slot, model) for spec in toolkit.tools if spec.backend.get("kind") == "paper"
            for slot, model in spec.slots.items()]


def check_expert_budgets(config: EvalConfig, toolkit: Toolkit) -> None:
    """Refuse a released-protocol run whose expert budget (context + tokens to generate) cannot fit a slot
    model's window: its server's `--max-model-len` (`backend.context_window`) or its model card's."""
    variant = find_source(config.benchmark).documents.expert_variant
    in_tokens = config.orchestrator.startswith("hf:") or config.orchestrator_tokenizer is not None
    for spec, slot, model in _slots(toolkit):
        model_id = model.model or model.name
        # a served model's budget counted as characters / 4 needs room for the estimate's error (a simulated
        # model has no window to overflow)
        estimated = model.backend.get("kind") != "sim" and not (in_tokens or model.backend.get("tokenizer"))
        problem = budget_problem(slot, model_id, family_of(model_id, variant), model.backend.get("context_window"),
                                 (spec.backend.get("context_tokens") or {}).get(slot), model.backend.get("max_tokens"),
                                 estimated)
        if problem:
            raise LabInputError(f"tool '{spec.name}' {problem}")


def run_notices(config: EvalConfig, toolkit: Toolkit) -> list[str]:
    """What a run measures differently from the released evaluation, one line each: an `openai:`
    orchestrator's context estimated without its tokenizer, and each limit on waiting that cuts a looser
    one, so the stricter never wins silently:
    `--tool-timeout-s` under a model backend's `timeout_s` or the released experts' ceiling, and a backend's
    own `timeout_s` under that ceiling."""
    lines = []
    if config.protocol == "rounds" and config.orchestrator.startswith("openai:") and not config.orchestrator_tokenizer:
        lines.append("the openai: orchestrator's context is measured as characters / 4; --orchestrator-tokenizer "
                     "DIR counts it in the served model's tokens, as the released evaluation does")
    released = config.expert_protocol == "released"
    cut_by_run, cut_by_backend = [], []
    for _, slot, model in _slots(toolkit):
        own = model.backend.get("timeout_s") if model.backend.get("kind") == "openai" else None
        allowed = min(config.expert_timeout_s, own) if released and own else (config.expert_timeout_s if released
                                                                               else own)
        if config.tool_timeout_s is not None and allowed is not None and config.tool_timeout_s < allowed:
            cut_by_run.append(f"{slot} ({allowed:g} s)")
        elif released and own and own < config.expert_timeout_s:
            cut_by_backend.append(f"{slot} ({own:g} s)")
    if cut_by_run:
        lines.append(f"--tool-timeout-s {config.tool_timeout_s:g} stops calls before their experts' own limits: "
                     + ", ".join(cut_by_run))
    if cut_by_backend:
        lines.append(f"backend timeout_s stops expert calls before --expert-timeout-s {config.expert_timeout_s:g}: "
                     + ", ".join(cut_by_backend))
    return lines
