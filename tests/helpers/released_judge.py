"""The released judge as the authors' code writes it (rrbanda/ToolOrchestra at d882ee7, evaluation/eval_hle.py
lines 270-285 and eval_frames.py lines 316-330, the `answer` branch of `call_tool`), transcribed for tests to
compare the lab's released judge prompt and verdict reading against. Kept in the released code's own shape on
purpose; `get_llm_response` (LLM_CALL.py) sends a string prompt as one user message.
"""

from __future__ import annotations

from collections.abc import Callable


def released_correctness(arguments: dict, pred: str, get_llm_response: Callable[..., str]) -> bool:
    if pred.strip()=='' or len(pred.split(' '))>500:
        correctness = False
    elif pred.strip().lower()==arguments['answer'].strip().lower():
        correctness = True
    else:
        eval_prompt = (f"Question: {arguments['problem']}\n\n"
                    f"Student answer: {pred}\n\n"
                    f"Reference answer: {arguments['answer']}\n\n"
                    "Assume that the reference answer is correct. Output <correct>True</correct> if the student answer matches the reference answer. Output <correct>False</correct> if the student answer does not match the reference answer.")  # noqa: E501
        eval_response = get_llm_response(model='gpt-5',messages=eval_prompt,temperature=1)
        eval_result = eval_response.split('<correct>')[-1].split('</correct>')[0]
        if eval_result.lower()=='true':
            correctness = True
        else:
            correctness = False
    return correctness
