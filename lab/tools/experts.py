"""How a slot tool asks its expert (the model behind a slot): the released evaluation's protocol, or the lab's.

Under the round protocol the orchestrator only names a tool and a slot; the environment writes the
expert's prompt. The released code (`evaluation/eval_hle.py`, `eval_frames.py` at d882ee7, `call_tool`
and the context building of `run_single`) does it per model:

- **Context.** The documents found (whole for GPT-5 and Llama-3.3; the first 1,000 characters for the Qwen
  models on HLE; whole for all on FRAMES), then the programs that printed something, with their output.
  The programs are cut from the front to a per-model code budget, then documents + programs to the
  model's context budget minus the problem's tokens; `Documents:` heads it when a document exists.
  On FRAMES there are never programs: `eval_frames.py` asks the coder, then reads its reply as
  `response['content'][0]['text']`, which fails on a chat completion, so nothing runs
  (`ExpertSettings.run_programs`; `--run-programs yes` runs them, as the code intends).
- **Prompts.** `search`: the context, `Question: {problem}` and a request for a query in `<query>` tags;
  `enhance_reasoning`: a request for "additional python code" in a ```python block; `answer`: the context
  and the problem, with a `\\boxed{}` system message for the Qwen models and an `<answer>` request for
  GPT-5 (and Llama's own wording).
- **Reading the reply.** The text between the last `<query>` and the next `</query>` (the problem when
  the call failed; no search when it is shorter than 5 characters on HLE, 10 on FRAMES; cut at 390);
  the last ```python block; the last `\\boxed{...}` or `<answer>...</answer>`.
- **Sampling.** Temperature 0.2 for the served models and their own max tokens (Qwen3 and the coder
  8,000, Qwen2.5-Math 2,000, Llama 40,000); GPT-5 at temperature 1 with 40,000.
- **Waiting.** The released client retries a failed call without end, a minute apart; each attempt has the
  SDK's 600 s timeout. The lab waits the same way up to a ceiling (`ExpertSettings.timeout_s`, one hour
  by default, named in the run's config), then tells the orchestrator the call failed.

Budgets are counted with the orchestrator's tokenizer, as the released code counts them (it loads
Qwen3-8B's for every model), or with the slot model's own tokenizer when its tool has one
(`count_tokens`). Models outside the released catalog get the Qwen3 budgets and the `<answer>` format.

The lab's own protocol (`lab`) is the earlier one: one prompt per role with `QUERY:` / `ANSWER:` lines and
the orchestrator's context. Simulated experts read whichever prompt they get (`lab.sim.model`), so the
offline world runs the same code path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from lab.errors import LabInputError
from lab.tools.base import ModelRequest, Observation, estimate_tokens

ExpertProtocol = Literal["released", "lab"]
EXPERT_PROTOCOLS: tuple[str, ...] = ("released", "lab")
#: Which released script the prompts and budgets follow: `eval_hle.py` or `eval_frames.py`.
Variant = Literal["hle", "frames"]
#: (text) -> tokens
TokenCounter = Callable[[str], int]

#: The released client's per-attempt timeout (the OpenAI SDK's default) and its pause between attempts.
ATTEMPT_TIMEOUT_S = 600.0
RETRY_PAUSE_S = 60.0

SEARCH_REQUEST: dict[str, str] = {
    "hle": ("Instead of directly answering the question, please write a query to search for a piece of relevant "
            "and missing information. The query should be a few key words about the information to search or a "
            "short sentence. Wrap the query within <query> and </query>."),
    "frames": ("Instead of directly answering the question, please think hard and write a concise query to search "
               "Wikipedia. Wrap the query within <query> and </query>."),
}
CODE_REQUEST = ("Instead of directly answering the question, please write additional python code that will give "
                "intermidiate results after execution. Wrap the code within ```python and ```. The code should be "
                "self-contained with all the import and initialization.")
BOXED_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
GPT5_ANSWER_REQUEST = ("\n\nTake a deep breath and think hard with high reasoning, wrap the thoughts within <think> "
                       "and </think>, and wrap only the exact answer without any explanation within <answer> and "
                       "</answer>.Output using the following format:\n<think>\n...\n</think>\n<answer>\n...\n</answer>")
LLAMA_ANSWER_REQUEST = ("\nWrap the thinking process and explanation between <think> and </think> and wrap only the "
                        "exact answer without any explanation within <answer> and </answer>.")
#: Queries shorter than this are not searched (released: HLE 5, FRAMES 10 characters); longer ones are cut.
QUERY_MIN_CHARS: dict[str, int] = {"hle": 5, "frames": 10}
QUERY_MAX_CHARS = 390
#: Characters of each document a model without whole documents reads (released HLE).
SHORT_DOCUMENT_CHARS = 1000

AnswerFormat = Literal["boxed", "gpt-5", "llama"]


@dataclass(frozen=True)
class Family:
    """What the released code does for one family of expert models (recognised by a substring of the id)."""

    name: str
    #: tokens of programs and of the whole context (documents + programs, less the problem's tokens)
    code_tokens: int
    context_tokens: int
    #: reads whole documents on HLE (else the first `SHORT_DOCUMENT_CHARS`); every model does on FRAMES
    whole_documents: bool
    temperature: float
    max_tokens: int
    answer_format: AnswerFormat
    #: the model's context window in tokens (model card), or None when unknown
    window: int | None


#: The released families, in the order the released code tests them. Windows: GPT-5 400k (OpenAI model
#: page), Qwen3-32B 40,960, Qwen2.5-Coder-32B 32,768 (without YaRN), Qwen2.5-Math 4,096, Llama-3.3-70B 131,072
#: (the models' config.json `max_position_embeddings`: what `vllm serve` gives them by default, as released).
FAMILIES: dict[str, Family] = {
    "gpt-5": Family("gpt-5", 40000, 120000, True, 1.0, 40000, "gpt-5", 400000),
    "qwen2.5-math": Family("qwen2.5-math", 1000, 2000, False, 0.2, 2000, "boxed", 4096),
    "qwen2.5-coder": Family("qwen2.5-coder", 16000, 24000, False, 0.2, 8000, "gpt-5", 32768),
    "qwen3": Family("qwen3", 12000, 24000, False, 0.2, 8000, "boxed", 40960),
    "llama-3.3": Family("llama-3.3", 10000, 80000, True, 0.2, 40000, "llama", 131072),
}
#: What `eval_frames.py` changes: GPT-5 reads 160k tokens, Llama 40k of programs; every model whole documents.
FRAMES_CHANGES: dict[str, dict[str, Any]] = {"gpt-5": {"context_tokens": 160000},
                                             "llama-3.3": {"code_tokens": 40000}}
#: A model outside the released catalog: the Qwen3 budgets and the `<answer>` format (the lab's choice).
OTHER = Family("other", 12000, 24000, False, 0.2, 8000, "gpt-5", None)


def family_of(model: str, variant: Variant = "hle") -> Family:
    """The released family of a model id (`gpt-5-mini` is GPT-5's, as in the released code)."""
    lowered = model.lower()
    found = next((f for key, f in FAMILIES.items() if key in lowered), OTHER)
    if variant == "frames":
        found = replace(found, whole_documents=True, **FRAMES_CHANGES.get(found.name, {}))
    return found


@dataclass(frozen=True)
class ExpertSettings:
    """How experts are asked in a run (the run's config records these)."""

    protocol: ExpertProtocol = "released"
    variant: Variant = "hle"
    #: ceiling on one expert call, retries included (the released code has none)
    timeout_s: float = 3600.0
    #: retries after a failed attempt, `RETRY_PAUSE_S` apart at most
    retries: int = 60
    #: whether an `enhance_reasoning` expert's program is run and joins the context (released FRAMES: no, its
    #: reader indexes the chat completion as `response['content'][0]['text']`, which fails, so no code runs)
    run_programs: bool = True


#: How a search's documents join the context: `reverse` (after the others, least relevant first: released
#: evaluation) or `interleaved` (released training's `merge_documents`).
DocumentOrder = Literal["reverse", "interleaved"]


def merge_documents(documents: list[str], found: list[str]) -> list[str]:
    """Released training's `merge_documents` (generation_quick3.py): each new document (least relevant
    first), then the next len(documents) // len(found) of the earlier ones, then the rest; the new ones
    simply follow when there are fewer earlier ones than new."""
    if not found:
        return documents
    if len(documents) < len(found):
        return documents + found
    merged: list[str] = []
    step = len(documents) // len(found)
    for k, document in enumerate(found):
        if document not in merged:
            merged.append(document)
        merged += [d for d in documents[k * step:(k + 1) * step] if d not in merged]
    return merged + documents[step * len(found):]


@dataclass
class Gathered:
    """What the environment has gathered in one rollout: documents (each once, in `order`) and the programs
    that printed something, with that output."""

    documents: list[str] = field(default_factory=list)
    programs: list[tuple[str, str]] = field(default_factory=list)
    order: DocumentOrder = "reverse"

    def add(self, observation: Observation) -> None:
        """Take what a tool call returned: `meta["documents"]` (retrieval, best first) and `meta["program"]` /
        `meta["program_output"]` (code); anything else adds nothing.

        Documents join in reverse rank, as in the released code: contexts are cut from the front, so the
        best ones must come last. A program joins only when its output is not blank (released)."""
        found = [d for d in reversed(observation.meta.get("documents") or []) if d not in self.documents]
        found = list(dict.fromkeys(found))
        if self.order == "interleaved":
            self.documents = merge_documents(self.documents, found)
        else:
            self.documents += found
        output = observation.meta.get("program_output") or ""
        if observation.meta.get("program") and output.strip():
            self.programs.append((observation.meta["program"], output))


@dataclass
class RoundView:
    """What a slot tool reads of the current round (`ToolContext.round`)."""

    gathered: Gathered
    #: the context as the orchestrator saw it this round (what the lab's protocol hands the expert)
    shown: str
    #: the orchestrator's token counter (the released code counts every budget with it)
    count: TokenCounter = estimate_tokens
    experts: ExpertSettings = field(default_factory=ExpertSettings)


def tokenizer_counter(folder: str, where: str) -> TokenCounter:
    """A token counter from a local tokenizer folder (nothing is downloaded); `where` names the setting in
    the one-line error when the folder holds no tokenizer."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise LabInputError(f"{where}: cannot load a tokenizer from '{folder}' ({str(exc).splitlines()[0]})") from None
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def cut_front(text: str, budget: int, count: TokenCounter) -> str:
    """`text` cut from the front to its last `budget` tokens as `count` measures them (the newest context
    is kept), with the released `cut_seq`'s slice `token_ids[-budget:]`: a budget of 0 keeps the whole
    text and a negative one drops its first -budget tokens (what the released code does when a problem
    outgrows a model's context budget, e.g. Qwen2.5-Math's 2,000 tokens). Found by bisection on the
    character offset, so a long context costs O(log n) counts."""
    if not text:
        return ""
    if budget <= 0:
        if budget == 0:
            return text
        budget += count(text)
        if budget <= 0:
            return ""
    if count(text) <= budget:
        return text
    low, high = 1, len(text)  # the smallest start offset whose tail fits
    while low < high:
        mid = (low + high) // 2
        if count(text[mid:]) <= budget:
            high = mid
        else:
            low = mid + 1
    return text[low:]


def expert_context(gathered: Gathered, family: Family, problem: str, count: TokenCounter,
                   context_tokens: int | None = None) -> str:
    """The context the released code builds for one expert (`run_single`, per tool and model)."""
    docs = "".join(f"Doc {i}: {d if family.whole_documents else d[:SHORT_DOCUMENT_CHARS]}\n\n"
                   for i, d in enumerate(gathered.documents, start=1))
    code = "".join(f"```python\n{program}\n```\n\n```output\n{output}\n```\n\n"
                   for program, output in gathered.programs)
    code = cut_front(code, family.code_tokens, count)
    if code and not code.startswith("```"):
        code = "```\n" + code
    budget = (context_tokens if context_tokens is not None else family.context_tokens) - count(problem)
    context = cut_front(docs + code, budget, count)
    return "Documents:\n" + context if docs else context


def expert_request(role: str, family: Family, variant: Variant, problem: str, context: str,
                   settings: ExpertSettings) -> ModelRequest:
    """The request the released code sends the expert of `role`, with its sampling and the run's waiting."""
    waiting = {"timeout_s": settings.timeout_s, "retries": settings.retries, "backoff_max_s": RETRY_PAUSE_S,
               "temperature": family.temperature, "max_tokens": family.max_tokens}
    if role == "search":
        return ModelRequest(f"{context.strip()}\n\nQuestion: {problem}\n{SEARCH_REQUEST[variant]}", **waiting)
    if role == "enhance_reasoning":
        return ModelRequest(f"{context.strip()}\n\nQuestion: {problem}\n{CODE_REQUEST}", **waiting)
    prompt = context.strip() + ("\n\nProblem:\n" if variant == "hle" else "\n\n") + problem
    if family.answer_format == "boxed":
        return ModelRequest(prompt, system=BOXED_SYSTEM, **waiting)
    return ModelRequest(prompt + (GPT5_ANSWER_REQUEST if family.answer_format == "gpt-5" else LLAMA_ANSWER_REQUEST),
                        **waiting)


def read_query(reply: str | None, problem: str, variant: Variant, family: Family | None = None) -> str | None:
    """The query to search, or None for no search: the text in the last `<query>` tags (the whole reply
    when it has none, as the released split reads it), the problem when the call failed (`reply` None)
    or, on FRAMES, came back empty from a writer other than Qwen3 (eval_frames.py checks the GPT-5 reply
    for content, not Qwen3's); None under the variant's minimum length; cut at 390 characters."""
    empty_fails = variant == "frames" and (family is None or family.name != "qwen3")
    if reply is None or (empty_fails and not reply):
        query = problem
    else:
        query = reply.split("<query>")[-1].split("</query>")[0]
    if len(query) < QUERY_MIN_CHARS[variant]:
        return None
    return query[:QUERY_MAX_CHARS]


def read_program(reply: str) -> str:
    """The program of a coder's reply: what follows the last ```python up to the next ``` (released)."""
    return reply.split("```python")[-1].split("```")[0]


def read_answer(reply: str, family: Family) -> str:
    """The answer in a reply: the last `\\boxed{...}` for the Qwen answer models ('' without one), else the
    text in the last `<answer>` tags (released)."""
    if family.answer_format == "boxed":
        if "\\boxed{" not in reply:
            return ""
        return "}".join(reply.split("\\boxed{")[-1].split("}")[:-1]).strip()
    return reply.split("<answer>")[-1].split("</answer>")[0].strip()


#: Tokens a released expert request holds beyond its context budget (problem included) and the tokens it may
#: generate: `Documents:`, the request wording, a system message and the chat template. Measured with Qwen's
#: vocabulary: at most 79 (the coder's code request under Qwen2.5's default system prompt); Qwen3's HLE search
#: request 65, the `\boxed{}` answer request 33.
REQUEST_TOKENS = 80
#: How many times its characters / 4 estimate a budget's text can be in a Qwen model's tokens, measured with
#: Qwen's vocabulary: prose 0.85-0.92, JSON 0.95-1.05, code 1.0, the offline world's documents 1.2. Math in
#: LaTeX (2.4) and runs of digits (4) go past it: count a served expert's budget in tokens.
ESTIMATE_ERROR = 1.25


def budget_problem(slot: str, model: str, family: Family, window: int | None,
                   context_tokens: int | None = None, max_tokens: int | None = None,
                   estimated: bool = False) -> str | None:
    """Why a slot's budget cannot work, or None: its context budget, the request's own `REQUEST_TOKENS` and
    the tokens it may generate (the family's, or the tool's own `max_tokens`) must fit the model's window
    (the served `--max-model-len` where the tool says so, else the model's own), the budget taken at
    `ESTIMATE_ERROR` times where it is `estimated` (counted as characters / 4, not in tokens): a request
    over the window is refused by the server (vLLM: "maximum context length"), and the expert call fails."""
    window = window or family.window
    budget = context_tokens if context_tokens is not None else family.context_tokens
    generated = max_tokens if max_tokens is not None else family.max_tokens
    counted = math.ceil(budget * ESTIMATE_ERROR) if estimated else budget
    if window is None or counted + REQUEST_TOKENS + generated <= window:
        return None
    how = (f" when the budget, counted as characters / 4, is {ESTIMATE_ERROR:g}x as many tokens" if estimated
           else "")
    fix = " or count it in tokens (--orchestrator-tokenizer, or the slot's backend.tokenizer)" if estimated else ""
    return (f"slot {slot} ({model}): a context budget of {budget:,} tokens plus {generated:,} to generate "
            f"exceeds the model's window of {window:,} with the request's own {REQUEST_TOKENS} tokens{how}; lower "
            f"the paper tool's backend.context_tokens.{slot}, serve the model with a longer --max-model-len{fix}")
