"""The released expert protocol as the authors' code writes it (rrbanda/ToolOrchestra at d882ee7,
evaluation/eval_hle.py and eval_frames.py: `call_tool` and the context building of `run_single`;
training/lead_agent/llm_agent/generation_quick3.py: `merge_documents`), transcribed for tests to compare
the lab's prompts, contexts and document order against. Kept in the released code's own shape on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


def tokenize(text: str) -> list[str]:
    """A tokenizer stand-in (the released code uses Qwen3-8B's): each word with the whitespace before it is a
    token, trailing whitespace joins the last one, so tokens join back into the text as a real tokenizer's
    decoded tokens do, and the last n tokens are the shortest tail holding n of them."""
    tokens = re.findall(r"\s*\S+", text)
    tail = text[sum(map(len, tokens)):]
    if tail:
        tokens = [*tokens[:-1], tokens[-1] + tail] if tokens else [tail]
    return tokens


def words(text: str) -> int:
    """Tokens of `text` as `tokenize` cuts it: its words (whitespace alone is one token), counted fast."""
    return len(text.split()) or int(bool(text))


def released_search_prompt(context_str: str, problem: str, frames: bool) -> str:
    prompt = context_str.strip() + '\n\n'
    if frames:
        prompt += (f"Question: {problem}\nInstead of directly answering the question, please think hard and write "
                   "a concise query to search Wikipedia. Wrap the query within <query> and </query>.")
    else:
        prompt += (f"Question: {problem}\nInstead of directly answering the question, please write a query to "
                   "search for a piece of relevant and missing information. The query should be a few key words "
                   "about the information to search or a short sentence. Wrap the query within <query> and "
                   "</query>.")
    return prompt


def released_code_prompt(context_str: str, problem: str) -> str:
    prompt = context_str.strip() + '\n\n'
    prompt += (f"Question: {problem}\nInstead of directly answering the question, please write additional python "
               "code that will give intermidiate results after execution. Wrap the code within ```python and ```. "
               "The code should be self-contained with all the import and initialization.")
    return prompt


def released_answer_messages(context_str: str, problem: str, model: str, frames: bool) -> tuple[str | None, str]:
    """(system message, user message) of the answer call."""
    prompt = context_str.strip() + ('\n\n' + problem if frames else '\n\nProblem:\n' + problem)
    if 'qwen3' in model or 'qwen2.5-math' in model:
        return "Please reason step by step, and put your final answer within \\boxed{}.", prompt
    if 'gpt-5' in model:
        return None, prompt + ("\n\nTake a deep breath and think hard with high reasoning, wrap the thoughts within "
                               "<think> and </think>, and wrap only the exact answer without any explanation within "
                               "<answer> and </answer>.Output using the following format:\n<think>\n...\n</think>\n"
                               "<answer>\n...\n</answer>")
    return None, prompt + ("\nWrap the thinking process and explanation between <think> and </think> and wrap only "
                           "the exact answer without any explanation within <answer> and </answer>.")


def cut_seq(seq: str, l: int) -> dict[str, Any]:  # noqa: E741 (the released name)
    """The released `cut_seq` on the `tokenize` stand-in (`tokenizer.batch_decode(token_ids[-l:])` joined)."""
    if len(seq) == 0:
        return {'effective_length': 0, 'string_after_cut': ''}
    token_ids = tokenize(seq)
    rs = token_ids[-l:]
    return {'effective_length': len(token_ids), 'string_after_cut': ''.join(rs)}


def released_context(doc_list: list[str], code_list: list[tuple[str, str]], role: str, model: str,
                     problem: str, frames: bool, count: Callable[[str], int] = words) -> str:
    """`run_single`'s context for one expert call, transcribed (budgets per tool and model, document cuts)."""
    budgets = {
        ("enhance_reasoning", "qwen2.5-coder"): (16000, 24000), ("enhance_reasoning", "gpt-5"): (40000, 120000),
        ("answer", "qwen2.5-math"): (1000, 2000), ("answer", "llama-3.3"): (40000 if frames else 10000, 80000),
        ("answer", "qwen3"): (12000, 24000), ("answer", "gpt-5"): (40000, 120000),
        ("search", "qwen3"): (12000, 24000), ("search", "gpt-5"): (40000, 120000),
    }
    family = next(f for (r, f) in budgets if r == role and f in model)
    max_code_length, max_context_length = budgets[(role, family)]
    if frames and family == "gpt-5":
        max_context_length = 160000
    whole = frames or family in ("gpt-5", "llama-3.3")
    doc_str = ''
    for doc_idx, doc in enumerate(doc_list):
        doc_str += f"Doc {doc_idx+1}: {doc}\n\n" if whole else f"Doc {doc_idx+1}: {doc[:1000]}\n\n"
    code_str = ''
    for code, output in code_list:
        code_str += f"```python\n{code}\n```\n\n```output\n{output}\n```\n\n"
    code_str = cut_seq(seq=code_str, l=max_code_length)['string_after_cut']
    if not code_str.startswith('```') and len(code_str) > 0:
        code_str = '```\n' + code_str
    context_str = cut_seq(seq=doc_str + code_str, l=max_context_length - count(problem))['string_after_cut']
    if len(doc_str) > 0:
        context_str = 'Documents:\n' + context_str
    return context_str


def released_merge_documents(main_list: list[str], sub_list: list[str]) -> list[str]:
    """generation_quick3.py `merge_documents`, transcribed."""
    if len(sub_list) == 0:
        return main_list
    if len(main_list) < len(sub_list):
        return main_list + sub_list
    merged_list: list[str] = []
    multiple = len(main_list) // len(sub_list)
    idx_main = 0
    idx_sub = 0
    while idx_sub < len(sub_list):
        if sub_list[idx_sub] not in merged_list:
            merged_list.append(sub_list[idx_sub])
        for iter_idx in range(idx_main, idx_main + multiple):
            if main_list[iter_idx] not in merged_list:
                merged_list.append(main_list[iter_idx])
        idx_main = idx_main + multiple
        idx_sub += 1
    merged_list += main_list[multiple * len(sub_list):]
    return merged_list
