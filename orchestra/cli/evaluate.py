"""`orchestra eval`: evaluate an orchestrator on a benchmark, logging every trajectory.

    orchestra eval --benchmark world --split test --orchestrator scripted:cheapest-first --limit 40

    orchestra eval --orchestrator openai:my-ckpt@http://localhost:8000/v1 --preference held-out \
        --samples 4 --temperature 0.7 --top-p 0.95

    orchestra eval --benchmark world:frames --judge sim:gpt-5 --limit 20

Re-running the same command resumes: finished (task, sample) pairs are skipped, missing ones run.
`--preference held-out` gives each task a held-out (instruction, P) pair, for preference-following
(paper Table 3); the instruction each task was shown is logged in the run's config (`lab.preference`).
`--judge TOOL` grades as the released evaluation grades FRAMES and HLE (exact match first, then the judge
model; `lab.eval.judged`) and reports accuracy both ways, the judge's cost apart from the orchestrator's.
"""

from __future__ import annotations

import typer
from rich.console import Console

from lab.benchmarks import sources
from lab.eval.checks import checked_toolkit
from lab.eval.config import EvalConfig
from lab.eval.harness import run_eval
from lab.report.tables import print_run_summaries, run_summaries
from lab.store import Store, resolve_db_path
from orchestra.cli.options import DbOption, JsonOption, print_json
from orchestra.cli.root import app


@app.command("eval")
def eval_command(
    benchmark: str = typer.Option(
        "world", help=", ".join(source.usage for source in sources()) + ", or a .py file that defines SOURCE."),
    benchmark_path: str | None = typer.Option(None, "--benchmark-path", help="Local benchmark file or folder."),
    split: str | None = typer.Option("test", help="Task split (train/validation/test; 'all' for every split)."),
    orchestrator: str = typer.Option(
        "scripted:cheapest-first", help="hf:<path>, openai:<model>@<url> or scripted:<name>."),
    toolkit: str = typer.Option(
        "default", help="Toolkit: default (free-form), paper (the released code's search / enhance_reasoning / "
                        "answer slots) or a YAML path."),
    pricing: str = typer.Option("default", help="Provider price table (e.g. together, deepinfra)."),
    preference: list[str] = typer.Option(
        [], "--preference", "-p",
        help="P as NAME=VALUE pairs, or 'held-out' for a held-out (instruction, P) pair per task; repeat for one "
             "run each.",
    ),
    preference_instruction: str | None = typer.Option(
        None, "--preference-instruction", help="Instruction shown to every task instead of the one paired with P.",
    ),
    max_turns: list[int] = typer.Option([], "--max-turns", help="Turn budget; repeat for a sweep (default 50)."),
    samples: int = typer.Option(1, help="Rollouts per task (hf:/openai: need --temperature > 0 for more than 1)."),
    temperature: float = typer.Option(0.0, help="Orchestrator sampling temperature (hf:, openai:); 0 is greedy."),
    top_p: float = typer.Option(1.0, "--top-p", help="Orchestrator nucleus-sampling mass (hf:, openai:)."),
    max_new_tokens: int | None = typer.Option(
        None, "--max-new-tokens", help="Orchestrator tokens per turn (default: the policy's)."),
    observation_chars: int = typer.Option(
        6000, "--observation-chars", help="Tool output shown to the orchestrator is cut here (match a trained "
                                          "model's config)."),
    orchestrator_latency_per_token: float | None = typer.Option(
        None, "--latency-per-token", help="hf: report generated tokens x this (s) as the orchestrator's latency, "
                                          "not wall time."),
    protocol: str = typer.Option(
        "conversation", "--protocol", help="conversation (the whole conversation each turn) or rounds (a fresh "
                                           "prompt per round, the released checkpoint's protocol)."),
    catalog: str | None = typer.Option(
        None, "--catalog", help="rounds: a tool catalog in the released format (e.g. tools.json) instead of the "
                                "toolkit's own descriptions."),
    context_tokens: int = typer.Option(
        27000, "--context-tokens", help="rounds: tokens of environment context (minus the problem's)."),
    retrieval_top_k: int | None = typer.Option(
        None, "--retrieval-top-k", help="Documents each `search` retrieves from its local index (default: under "
                                        "rounds the released FRAMES 150 / HLE 50, else the toolkit's top_k)."),
    retrieval_whitelist: str | None = typer.Option(
        None, "--retrieval-whitelist", help="Where a task's document whitelist applies: global (the index's top "
                                            "1,000, then the task's documents among them; the released HLE default "
                                            "under rounds) or inside (search among the task's documents)."),
    orchestrator_tokenizer: str | None = typer.Option(
        None, "--orchestrator-tokenizer", help="rounds, openai: orchestrators: a local tokenizer folder of the served "
                                               "model, so the context is cut in its tokens (else characters / 4)."),
    orchestrator_provider: str | None = typer.Option(
        None, "--orchestrator-provider", help="openai: orchestrators: whose request rules the endpoint follows, "
                                              "openai or compatible (default: placed from the URL)."),
    orchestrator_family: str | None = typer.Option(
        None, "--orchestrator-family", help="openai: orchestrators: the model's family at its provider (openai: "
                                            "reasoning or chat; default: placed from the model id)."),
    expert_protocol: str | None = typer.Option(
        None, "--expert-protocol", help="released (the released evaluation's expert prompts, contexts, sampling and "
                                        "waiting per model; the default under --protocol rounds) or lab."),
    calls_per_round: str | None = typer.Option(
        None, "--calls-per-round", help="rounds: first (the first valid call of a round runs: the released HLE and "
                                        "FRAMES evaluations) or distinct (each distinct valid tool, answer last: what "
                                        "eval_frames.py intends; default: the benchmark's released rule)."),
    run_programs: str | None = typer.Option(
        None, "--run-programs", help="Released experts: yes (run enhance_reasoning programs and add their output to "
                                     "the context) or no (default: the benchmark's released rule; FRAMES runs "
                                     "none, a quirk of its code reader)."),
    tool_timeout_s: float | None = typer.Option(
        None, "--tool-timeout-s", help="Ceiling on any one tool call in seconds (default: each tool's own limit)."),
    expert_timeout_s: float = typer.Option(
        3600.0, "--expert-timeout-s", help="Released experts: ceiling on one expert call, retries included (the "
                                           "released client retries without end)."),
    user: str = typer.Option(
        "scripted", "--user", help="tau2: the simulated user: scripted (offline) or an LLM tool of the toolkit."),
    judge: str | None = typer.Option(
        None, "--judge", help="An LLM tool of the toolkit as judge: answers exact match rejects (FRAMES/HLE rule) "
                              "and tau2 NL assertions; accuracy is reported both ways, the judge's cost apart."),
    judge_prompt: str | None = typer.Option(
        None, "--judge-prompt", help="released (the released evaluation's judge prompt and reading; the default "
                                     "under --expert-protocol released) or lab (the lab's stricter prompt)."),
    tau2_agent: str = typer.Option(
        "lab", "--tau2-agent", help="tau2: lab (the lab's agent) or released (the released evaluation's: domain "
                                    "policy in the prompt, call_expert, <message> replies, 200 steps)."),
    limit: int | None = typer.Option(None, help="Only the first N tasks."),
    tasks: list[str] = typer.Option([], "--tasks", help="Only these task ids (repeat or comma-separate)."),
    concurrency: int = typer.Option(16, help="Rollouts in flight."),
    rate_limit: float | None = typer.Option(None, "--rate-limit", help="Max rollout starts per second."),
    budget_usd: float | None = typer.Option(None, "--budget-usd", help="Stop before total cost passes this."),
    seed: int = typer.Option(0, help="Seed for policies, simulated tools and sampling."),
    run_name: str = typer.Option("", "--run-name", help="Name (part of the run id: a new name starts a new run)."),
    shard: str | None = typer.Option(
        None, "--shard", help="i/N: only the i-th of N slices of tasks x samples (1-based), for N machines (a SLURM "
                              "array) writing one run; appends to the store's spool, no lock (`orchestra store`)."),
    db: str | None = DbOption,
    as_json: bool = JsonOption,
) -> None:
    """Evaluate an orchestrator; prints the run id(s) and a summary table."""
    config = EvalConfig.build(
        benchmark=benchmark, benchmark_path=benchmark_path, split=None if split == "all" else split,
        orchestrator=orchestrator, toolkit=toolkit, pricing=pricing, preferences=list(preference),
        preference_instruction=preference_instruction, max_turns=list(max_turns) or [50], samples=samples,
        temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, observation_chars=observation_chars,
        orchestrator_latency_per_token_s=orchestrator_latency_per_token, protocol=protocol, catalog=catalog,
        context_tokens=context_tokens, retrieval_top_k=retrieval_top_k,
        retrieval_whitelist=retrieval_whitelist, expert_protocol=expert_protocol,
        orchestrator_tokenizer=orchestrator_tokenizer, orchestrator_provider=orchestrator_provider,
        orchestrator_family=orchestrator_family, calls_per_round=calls_per_round, run_programs=run_programs,
        tool_timeout_s=tool_timeout_s, expert_timeout_s=expert_timeout_s, user=user, judge=judge,
        judge_prompt=judge_prompt, tau2_agent=tau2_agent,
        limit=limit,
        tasks=[t for item in tasks for t in item.split(",") if t], concurrency=concurrency, rate_limit=rate_limit,
        budget_usd=budget_usd, seed=seed, run_name=run_name, shard=shard,
    )
    console = Console(stderr=True)
    toolkit = checked_toolkit(config, console)  # before the store: a refused command creates nothing
    store = Store(resolve_db_path(db), spool=shard is not None)  # shards on many machines share no lock
    summaries = run_eval(config, store, console, toolkit=toolkit)
    table = run_summaries(store, [s.run_id for s in summaries])
    if as_json:
        print_json([{**row, "unavailable_rollouts": s.unavailable, "error_rollouts": s.failed, "cut_rollouts": s.cut,
                     "no_verdict_rollouts": s.judge_failed, "stopped_by_budget": s.stopped_by_budget,
                     "errors_seen": s.errors, "failed_endpoints": s.failed_endpoints}
                    for row, s in zip(table.astype(object).where(table.notna(), None).to_dict(orient="records"),
                                      summaries)])
    else:
        print_run_summaries(table, summaries, Console())
    # nothing stored for those rollouts, a re-run retries them; an endpoint that never answered fails the run
    if any(s.unavailable or s.judge_failed or s.failed_endpoints for s in summaries):
        raise typer.Exit(1)
