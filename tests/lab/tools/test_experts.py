"""Tests for lab.tools.experts: the released expert protocol against the authors' own strings and code.

The expected values are written as the released code writes them (rrbanda/ToolOrchestra at d882ee7,
evaluation/eval_hle.py and eval_frames.py: `call_tool` and the context building of `run_single`), so a
drift in the lab's prompts, cuts or readers fails here.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.tools.base import Observation
from lab.tools.experts import (
    REQUEST_TOKENS,
    ExpertSettings,
    Gathered,
    budget_problem,
    cut_front,
    expert_context,
    expert_request,
    family_of,
    merge_documents,
    read_answer,
    read_program,
    read_query,
)
from tests.helpers.released_experts import (
    cut_seq,
    released_answer_messages,
    released_code_prompt,
    released_context,
    released_merge_documents,
    released_search_prompt,
    words,
)

PROBLEM = "Which river flows through the town where the author of 'Lanterns' was born?"
SETTINGS = ExpertSettings()


MODELS = {"search": ["gpt-5", "gpt-5-mini", "qwen3-32b"],
          "enhance_reasoning": ["gpt-5", "gpt-5-mini", "qwen2.5-coder-32b-instruct"],
          "answer": ["gpt-5", "gpt-5-mini", "llama-3.3-70b-instruct", "qwen3-32b", "qwen2.5-math-72b-instruct",
                     "qwen2.5-math-7b-instruct"]}
CASES = [(role, model, frames) for role, models in MODELS.items() for model in models for frames in (False, True)]


def gathered_state() -> Gathered:
    long_doc = "The Lantern Guild was founded by Ada Brook in the town of Welmouth on the river Asca. " * 30
    return Gathered(documents=["Ada Brook wrote 'Lanterns' in 1834.", long_doc],
                    programs=[("print(1834 - 1800)", "34\n"), ("import math\nprint(math.pi)", "3.14159\n")])


@pytest.mark.parametrize(("role", "model", "frames"), CASES)
def test_each_expert_receives_the_released_prompt_for_the_same_state(role, model, frames):
    gathered = gathered_state()
    variant = "frames" if frames else "hle"
    family = family_of(model, variant)
    context = expert_context(gathered, family, PROBLEM, words)
    assert context == released_context(gathered.documents, gathered.programs, role, model, PROBLEM, frames)
    request = expert_request(role, family, variant, PROBLEM, context, SETTINGS)
    if role == "search":
        assert (request.system, request.prompt) == (None, released_search_prompt(context, PROBLEM, frames))
    elif role == "enhance_reasoning":
        assert (request.system, request.prompt) == (None, released_code_prompt(context, PROBLEM))
    else:
        assert (request.system, request.prompt) == released_answer_messages(context, PROBLEM, model, frames)


@pytest.mark.parametrize(("model", "temperature", "max_tokens"), [
    ("gpt-5", 1.0, 40000), ("gpt-5-mini", 1.0, 40000), ("qwen3-32b", 0.2, 8000),
    ("qwen2.5-coder-32b-instruct", 0.2, 8000), ("qwen2.5-math-7b-instruct", 0.2, 2000),
    ("llama-3.3-70b-instruct", 0.2, 40000)])
def test_experts_are_sampled_as_released_and_wait_up_to_the_runs_ceiling(model, temperature, max_tokens):
    request = expert_request("answer", family_of(model), "hle", PROBLEM, "", ExpertSettings(timeout_s=900.0))
    assert (request.temperature, request.max_tokens) == (temperature, max_tokens)
    assert request.timeout_s == 900.0 and request.backoff_max_s == 60.0  # the released client sleeps 60 s


def test_an_empty_context_still_leads_with_the_blank_lines_the_released_prompt_has():
    request = expert_request("search", family_of("qwen3-32b"), "hle", PROBLEM, "", SETTINGS)
    assert request.prompt.startswith("\n\nQuestion: Which river")


def test_a_cut_program_section_is_reopened_with_a_fence_and_documents_are_cut_for_qwen_on_hle():
    gathered = Gathered(documents=["x" * 3000], programs=[("print(1)", "word " * 50)] * 400)
    qwen = expert_context(gathered, family_of("qwen3-32b"), PROBLEM, words)
    assert "Doc 1: " + "x" * 1000 + "\n\n" in qwen and "x" * 1001 not in qwen
    code = expert_context(Gathered(programs=gathered.programs), family_of("qwen3-32b"), PROBLEM, words)
    assert code.startswith("```\n") and words(code) <= 12000 + 1
    gpt = expert_context(gathered, family_of("gpt-5"), PROBLEM, words)
    assert "x" * 3000 in gpt


# ---- reading replies ----------------------------------------------------------------------------------------


@given(st.text(alphabet=st.sampled_from("ab <>/query\n"), max_size=60))
def test_a_query_is_read_as_the_released_split_reads_it(reply):
    found = reply.split('<query>')[-1].split('</query>')[0]
    expected = None if len(found) < 5 else found[:390]
    assert read_query(reply, PROBLEM, "hle") == expected


def test_a_failed_query_writer_searches_the_problem_and_a_short_query_searches_nothing():
    assert read_query(None, PROBLEM, "hle") == PROBLEM
    assert read_query("", PROBLEM, "frames") == PROBLEM  # FRAMES: an empty reply also falls back ...
    assert read_query("", PROBLEM, "frames", family_of("gpt-5-mini", "frames")) == PROBLEM
    assert read_query("", PROBLEM, "frames", family_of("qwen3-32b", "frames")) is None  # ... but not Qwen3's
    assert read_query("<query>river</query>", PROBLEM, "hle") == "river"
    assert read_query("<query>river</query>", PROBLEM, "frames") is None  # under 10 characters
    assert read_query("<query>" + "q" * 500 + "</query>", PROBLEM, "hle") == "q" * 390


@given(st.text(alphabet=st.sampled_from("ab`python\n{}"), max_size=60))
def test_a_program_is_read_as_the_released_split_reads_it(reply):
    assert read_program(reply) == reply.split('```python')[-1].split('```')[0]


@given(st.text(alphabet=st.sampled_from("ab{}\\boxed <>/answer"), max_size=60))
def test_answers_are_read_as_the_released_splits_read_them(reply):
    boxed = '}'.join(reply.split('\\boxed{')[-1].split('}')[:-1]).strip() if '\\boxed{' in reply else ''
    assert read_answer(reply, family_of("qwen3-32b")) == boxed
    assert read_answer(reply, family_of("gpt-5")) == reply.split('<answer>')[-1].split('</answer>')[0].strip()


def test_a_boxed_answer_holding_braces_is_read_whole():
    assert read_answer("so \\boxed{\\frac{1}{2}}.", family_of("qwen2.5-math-7b-instruct")) == "\\frac{1}{2}"


# ---- gathering, budgets ---------------------------------------------------------------------------------------


def test_documents_join_least_relevant_first_and_programs_only_with_output():
    gathered = Gathered()
    gathered.add(Observation(meta={"documents": ["best", "second", "third"]}))
    gathered.add(Observation(meta={"program": "x = 1", "program_output": "  \n"}))
    gathered.add(Observation(meta={"program": "print(1)", "program_output": "1\n"}))
    assert gathered.documents == ["third", "second", "best"] and gathered.programs == [("print(1)", "1\n")]


@given(st.lists(st.integers(0, 40), unique=True, max_size=12), st.lists(st.integers(41, 80), unique=True, max_size=6))
def test_interleaving_is_the_released_trainers_merge(old, new):
    old_docs, new_docs = [f"d{i}" for i in old], [f"d{i}" for i in new]
    assert merge_documents(old_docs, new_docs) == released_merge_documents(old_docs, new_docs)


def test_interleaved_gathering_puts_a_new_search_among_the_earlier_documents():
    gathered = Gathered(order="interleaved")
    gathered.add(Observation(meta={"documents": ["a1", "a2", "a3", "a4"]}))
    gathered.add(Observation(meta={"documents": ["b1", "b2"]}))
    assert gathered.documents == ["b2", "a4", "a3", "b1", "a2", "a1"]


@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=300), st.integers(-80, 80))
def test_a_cut_is_the_released_slice_for_every_budget(text, budget):
    # `token_ids[-l:]`: the last l tokens; l = 0 keeps everything, a negative l drops the first -l tokens
    # (a problem longer than Qwen2.5-Math's 2,000-token budget leaves it negative)
    assert cut_front(text, budget, words) == cut_seq(seq=text, l=budget)['string_after_cut']


def recipe_serve_lines() -> dict[str, tuple[int, str]]:
    """docs/reproduce.md step 1: model id -> (its `--max-model-len`, the comment after the line)."""
    from tests.conftest import REPO

    page = (REPO / "docs" / "reproduce.md").read_text()
    return {m.group(1): (int(m.group(2)), m.group(3)) for m in
            re.finditer(r"^vllm serve (\S+) .*?--max-model-len (\d+)[^#\n]*(?:# (.*))?$", page, re.MULTILINE)}


def test_the_recipes_serve_lines_hold_each_released_request_with_slack():
    """Each served expert's window holds its released budget (HLE and FRAMES), the request's own wording and
    template (`REQUEST_TOKENS`, measured) and its max tokens, counted in tokens as the recipe counts them; the
    line's comment gives the spare it leaves; Qwen3-32B's also holds a characters / 4 estimate; and each
    slot of the recipe's toolkit says the window its server holds. The orchestrator's holds 27,000 tokens of
    context, the released catalog with its preamble (JSON at 3 characters a token; measured 3.7) and 12,000."""
    from tests.conftest import REPO, SHARED

    lines = recipe_serve_lines()
    experts = {model: window for model, (window, _) in lines.items() if model.startswith("Qwen/")}
    assert set(experts) == {"Qwen/Qwen3-32B", "Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen/Qwen2.5-Math-72B-Instruct",
                            "Qwen/Qwen2.5-Math-7B-Instruct"}
    for model, window in experts.items():
        for variant in ("hle", "frames"):
            family = family_of(model, variant)
            assert budget_problem("s", model, family, window) is None, (model, variant)
            needed = family.context_tokens + REQUEST_TOKENS + family.max_tokens
            spare = f"{family.context_tokens:,} + {REQUEST_TOKENS} + {family.max_tokens:,} = {needed:,}: " \
                    f"{window - needed:,} spare"
            assert lines[model][1].startswith(spare), (model, lines[model][1], spare)
        assert window == family_of(model).window  # the model's own window, as `vllm serve` gives it by default
    assert budget_problem("s", "qwen3-32b", family_of("qwen3-32b"), experts["Qwen/Qwen3-32B"], estimated=True) is None
    for model in ("Qwen/Qwen2.5-Coder-32B-Instruct", "Qwen/Qwen2.5-Math-7B-Instruct"):
        assert "count it in tokens" in budget_problem("s", model, family_of(model), experts[model], estimated=True)
    page = (REPO / "docs" / "reproduce.md").read_text()
    for model, window in experts.items():
        slots = re.findall(rf"model: {re.escape(model)}, context_window: (\d+)", page)
        assert slots and {int(w) for w in slots} == {window}, model
    (orchestrator,) = [window for model, (window, _) in lines.items() if "Orchestrator" in model]
    catalog = (SHARED / "toolorchestra" / "tools.json").read_text()
    preamble = ("You are good at using tools.\n\n# Tools\n\nYou may call one or more functions to assist with the user "
                "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
                "</tools>\n\nFor each function call, return a json object with function name and arguments within "
                "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                "<args-json-object>}\n</tool_call>Problem: \n\nChoose an appropriate tool.")
    max_new_tokens = int(re.search(r"--max-new-tokens (\d+)", page).group(1))
    assert 27000 + (len(catalog) + len(preamble)) // 3 + max_new_tokens <= orchestrator


def test_released_budgets_fit_the_models_windows_and_a_longer_one_is_refused():
    for model in ("gpt-5", "qwen3-32b", "qwen2.5-coder-32b-instruct", "qwen2.5-math-7b-instruct",
                  "llama-3.3-70b-instruct"):
        for variant in ("hle", "frames"):
            assert budget_problem("s", model, family_of(model, variant), None) is None
    problem = budget_problem("answer-4", "qwen3-32b", family_of("qwen3-32b"), 16384)
    assert "24,000" in problem and "16,384" in problem and "answer-4" in problem
    assert budget_problem("answer-4", "qwen3-32b", family_of("qwen3-32b"), 16384, context_tokens=8000) is None


def test_a_served_coder_counted_as_characters_is_refused_and_counted_in_tokens_runs(tmp_path):
    """The coder's 32,768 tokens hold its released request counted in tokens (688 spare), not a characters
    / 4 count that may be a quarter short: an `openai:` orchestrator without its tokenizer is refused
    before any work, naming the fix; with `--orchestrator-tokenizer` (or the slot's own tokenizer) it runs."""
    import yaml

    from lab.errors import LabInputError
    from lab.eval.checks import check_expert_budgets
    from lab.eval.config import EvalConfig
    from lab.toolkit import load_toolkit

    coder = {"name": "qwen2.5-coder-32b", "model": "qwen2.5-coder-32b-instruct",
             "backend": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                         "model": "Qwen/Qwen2.5-Coder-32B-Instruct", "context_window": 32768}}
    path = tmp_path / "served.yaml"
    path.write_text(yaml.safe_dump({"name": "served", "tools": [
        {"name": "enhance_reasoning", "backend": {"kind": "paper", "role": "enhance_reasoning",
                                                  "slots": {"reasoner-3": coder}}}]}))
    toolkit = load_toolkit(str(path))
    orchestrator = "openai:orchestrator@http://127.0.0.1:9/v1"
    estimated = EvalConfig(benchmark="world:hle", protocol="rounds", orchestrator=orchestrator, toolkit=str(path))
    with pytest.raises(LabInputError, match="reasoner-3.*1.25x as many tokens.*--orchestrator-tokenizer"):
        check_expert_budgets(estimated, toolkit)
    (tmp_path / "tokenizer").mkdir()
    counted = estimated.model_copy(update={"orchestrator_tokenizer": str(tmp_path / "tokenizer")})
    check_expert_budgets(counted, toolkit)  # 24,000 + 80 + 8,000 of 32,768
