"""The released round loop as the authors' code writes it (rrbanda/ToolOrchestra at d882ee7,
evaluation/eval_hle.py and eval_frames.py: `run_single`, and the parts of `call_tool` that decide what an
expert is asked and what its reply adds), transcribed for tests to compare the lab's rounds against: the
orchestrator's messages and catalog each round, which calls run, each expert's request and the answer.

Kept in the released code's own shape on purpose, quirks included (FRAMES's unconditional `break` and its
code reader that fails on a chat completion, HLE's `tool.'`, `cut_seq`'s slice). What the released code
reaches outside itself comes in through `World`: the orchestrator, the expert models, the retrieval
server and `subprocess`. Replies are chat-completion stand-ins (attributes, not keys), as the OpenAI SDK's
are. Costs, files, the judge and the fallback clients are left out. The tokenizer is
`released_experts.tokenize`, a word stand-in for Qwen3-8B's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from tests.helpers.released_experts import cut_seq, released_answer_messages, words

MODEL_MAPPING = {
    "search-1": "gpt-5",
    "search-2": "gpt-5-mini",
    "search-3": "Qwen/Qwen3-32B",
    "reasoner-1": "gpt-5",
    "reasoner-2": "gpt-5-mini",
    "reasoner-3": "Qwen/Qwen2.5-Coder-32B-Instruct",
    "answer-math-1": "Qwen/Qwen2.5-Math-72B-Instruct",
    "answer-math-2": "Qwen/Qwen2.5-Math-7B-Instruct",
    "answer-1": "gpt-5",
    "answer-2": "gpt-5-mini",
    "answer-3": "meta-llama/Llama-3.3-70B-Instruct",
    "answer-4": "Qwen/Qwen3-32B"
}
ALL_TOOLS = {
    "enhance_reasoning": {
        'model': ["reasoner-1", "reasoner-2", "reasoner-3"]
    },
    "answer": {
        'model': ["answer-math-1", "answer-math-2", "answer-1", "answer-2", "answer-3", "answer-4"]
    },
    "search": {
        "model": ["search-1", "search-2", "search-3"]
    },
}


def completion(content: str | None = None, tool_calls: list[Any] | None = None) -> Any:
    """A chat completion as the OpenAI SDK returns it: attributes, not keys (`response['content']` fails)."""
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content, tool_calls=tool_calls))])


def tool_call(name: str, arguments: dict[str, Any]) -> Any:
    return SimpleNamespace(function=SimpleNamespace(name=name, arguments=json.dumps(arguments)))


@dataclass
class World:
    """What `run_single` and `call_tool` reach outside themselves."""

    #: (chat, tools) -> the orchestrator's chat completion (`get_llm_response(model=MODEL_NAME, ...)`)
    orchestrator: Callable[[list[dict[str, str]], list[dict[str, Any]]], Any]
    #: (model, messages) -> the expert's chat completion (`get_llm_response`, which retries until it has one)
    expert: Callable[[str, Any], Any]
    #: query -> documents, best first (the retrieval server)
    retrieve: Callable[[str], list[str]]
    #: code -> stdout (`subprocess.run(['python', code_path], timeout=60)`)
    execute: Callable[[str], str]
    #: tools.json
    raw_tools: list[dict[str, Any]]
    MAX_ROUNDS: int = 50
    #: what was asked, in order: (model, messages), messages a string or a chat
    asked: list[tuple[str, Any]] = field(default_factory=list)

    def get_llm_response(self, model: str, messages: Any) -> Any:
        self.asked.append((model, messages))
        return self.expert(model, messages)


# ---- call_tool -----------------------------------------------------------------------------------------------


def call_tool(arguments: dict[str, Any], world: World, frames: bool) -> dict[str, Any]:
    if arguments['tool'] == 'enhance_reasoning':
        prompt = arguments['context_str'].strip() + '\n\n'
        prompt += (f"Question: {arguments['problem']}\nInstead of directly answering the question, please write "
                   "additional python code that will give intermidiate results after execution. Wrap the code within "
                   "```python and ```. The code should be self-contained with all the import and initialization.")
        model_name = arguments['model']
        response: Any = ''
        if 'gpt-5' in model_name.lower() or 'qwen2.5-coder' in model_name.lower():
            response = world.get_llm_response(model_name, prompt)
        if isinstance(response, str):
            arguments['generated_code'] = ''
            arguments['exec_result'] = ''
            return arguments
        try:
            if frames:  # eval_frames.py reads a Claude-style reply, which a chat completion is not
                generated_code = response['content'][0]['text'].split('```python')[-1].split('```')[0]
            else:
                generated_code = response.choices[0].message.content.split('```python')[-1].split('```')[0]
        except:  # noqa: E722 (released)
            generated_code = ''
        if generated_code == '':
            arguments['generated_code'] = ''
            arguments['exec_result'] = ''
            return arguments
        exec_result = world.execute(generated_code)
        arguments['generated_code'] = generated_code
        arguments['exec_result'] = exec_result
        return arguments

    elif arguments['tool'] == 'answer':
        system, prompt = released_answer_messages(arguments['context_str'], arguments['problem'],
                                                  arguments['model'].lower(), frames)
        messages: Any = prompt if system is None else [{"role": "system", "content": system},
                                                       {"role": "user", "content": prompt}]
        response = world.get_llm_response(arguments['model'], messages)
        response_str = response.choices[0].message.content
        if 'qwen3' in arguments['model'].lower() or 'qwen2.5-math' in arguments['model'].lower():
            if not isinstance(response_str, str) or '\\boxed{' not in response_str:
                pred = ''
            else:
                pred_components = response.choices[0].message.content.split('\\boxed{')[-1].split('}')[:-1]
                pred = '}'.join(pred_components).strip()
        else:
            pred = response.choices[0].message.content.split('<answer>')[-1].split('</answer>')[0].strip()
        arguments['pred'] = pred
        return arguments

    elif arguments['tool'] == 'search':
        contents: list[str] = []
        prompt = arguments['context_str'].strip() + '\n\n'
        if frames:
            prompt += (f"Question: {arguments['problem']}\nInstead of directly answering the question, please think "
                       "hard and write a concise query to search Wikipedia. Wrap the query within <query> and "
                       "</query>.")
        else:
            prompt += (f"Question: {arguments['problem']}\nInstead of directly answering the question, please write "
                       "a query to search for a piece of relevant and missing information. The query should be a few "
                       "key words about the information to search or a short sentence. Wrap the query within <query> "
                       "and </query>.")
        cur_query_writer = arguments['model']
        query_to_call = None
        if 'gpt-5' in cur_query_writer.lower():
            response = world.get_llm_response(cur_query_writer, prompt)
            if frames:
                failed = isinstance(response, str) or not response.choices[0].message.content
            else:
                failed = isinstance(response, str) or not response
            if failed:
                query_to_call = arguments['problem']
            else:
                query_to_call = response.choices[0].message.content.split('<query>')[-1].split('</query>')[0]
        elif 'qwen3' in cur_query_writer.lower():
            response = world.get_llm_response(cur_query_writer, prompt)
            if isinstance(response, str):
                query_to_call = arguments['problem']
            else:
                query_to_call = response.choices[0].message.content.split('<query>')[-1].split('</query>')[0]
        if query_to_call is None or len(query_to_call) < (10 if frames else 5):
            pass
        else:
            contents = world.retrieve(query_to_call[:390])
        arguments['search_results_data'] = contents
        return arguments
    raise AssertionError(arguments['tool'])


# ---- run_single ----------------------------------------------------------------------------------------------


def expert_context_str(tool_name: str, expert_model_to_call: str, doc_list: list[str],
                       code_list: list[dict[str, str]], user_problem: str, frames: bool) -> str:
    """The context building of `run_single`'s three tool branches (budgets per tool and model)."""
    model = expert_model_to_call.lower()
    max_code_length = max_context_length = 0
    if tool_name == 'enhance_reasoning':
        if 'qwen2.5-coder' in model:
            max_code_length, max_context_length = 16000, 24000
        elif 'gpt-5' in model:
            max_code_length, max_context_length = 40000, 160000 if frames else 120000
    elif tool_name == 'answer':
        if 'qwen2.5-math' in model:
            max_code_length, max_context_length = 1000, 2000
        elif 'llama-3.3' in model:
            max_code_length, max_context_length = 40000 if frames else 10000, 80000
        elif 'qwen3' in model:
            max_code_length, max_context_length = 12000, 24000
        elif 'gpt-5' in model:
            max_code_length, max_context_length = 40000, 160000 if frames else 120000
    elif tool_name == 'search':
        if 'qwen3' in model:
            max_code_length, max_context_length = 12000, 24000
        elif 'gpt-5' in model:
            max_code_length, max_context_length = 40000, 160000 if frames else 120000
    doc_str = ''
    for doc_idx, doc in enumerate(doc_list):
        if frames:
            whole = True
        elif tool_name == 'enhance_reasoning':
            whole = 'qwen2.5-coder' not in model
        elif tool_name == 'answer':
            whole = 'gpt-5' in model or 'llama' in model
        else:
            whole = 'gpt-5' in model
        doc_str += f"Doc {doc_idx+1}: {doc}\n\n" if whole else f"Doc {doc_idx+1}: {doc[:1000]}\n\n"
    code_str = ''
    for code_piece in code_list:
        code_str += f"```python\n{code_piece['code']}\n```\n\n```output\n{code_piece['output']}\n```\n\n"
    str_cut = cut_seq(seq=code_str, l=max_code_length)
    code_str = str_cut['string_after_cut']
    if not code_str.startswith('```') and len(code_str) > 0:
        code_str = '```\n' + code_str
    problem_len = words(user_problem)
    context_str = cut_seq(seq=doc_str + code_str, l=max_context_length - problem_len)['string_after_cut']
    if len(doc_str) > 0:
        context_str = 'Documents:\n' + context_str
    return context_str


def orchestrator_context_str(problem: str, doc_list: list[str], code_list: list[dict[str, str]],
                             frames: bool) -> str:
    """The context building at the top of `run_single`'s round (HLE and FRAMES differ here)."""
    attempt_list: list[dict[str, str]] = []
    doc_str = ''
    for doc_idx, doc in enumerate(doc_list):
        doc_str += f"Doc {doc_idx+1}: {doc[:4000]}\n\n" if frames else f"Doc {doc_idx+1}: {doc[:1200]} ...\n\n"
    code_str = ''
    for code_piece in code_list:
        code_str += f"```python\n{code_piece['code']}\n```\n\n```output\n{code_piece['output']}\n```\n\n"
    attempt_str = ''
    for attempt_idx, attempt in enumerate(attempt_list):
        attempt_str += f"Attempt{attempt_idx+1} answer by {attempt['model']}: {attempt['answer']}\n"
    str_cut = cut_seq(seq=attempt_str, l=8000)
    attempt_str = str_cut['string_after_cut']
    if not attempt_str.startswith('Attempt') and len(attempt_str) > 0:
        attempt_str = 'Attempt answer: ' + attempt_str
    str_cut = cut_seq(seq=code_str + attempt_str, l=12000)
    code_attempt_str = str_cut['string_after_cut']
    code_attempt_str_len = str_cut['effective_length']
    if not code_attempt_str.startswith('```') and len(code_attempt_str) > 0:
        code_attempt_str = '```\n' + code_attempt_str
    if frames:
        if code_attempt_str_len < 24000:
            context_str = cut_seq(seq=doc_str + "\npython code and execution outputs:\n" + code_attempt_str,
                                  l=24000)['string_after_cut']
            if len(doc_str) > 0:
                context_str = 'Documents:\n' + context_str
        else:
            context_str = code_attempt_str
        return context_str
    problem_length = words(problem)
    if code_attempt_str_len < 27000 - problem_length:
        if code_attempt_str:
            cut = cut_seq(seq=doc_str + "\npython code and execution outputs:\n" + code_attempt_str,
                          l=27000 - problem_length)
        else:
            cut = cut_seq(seq=doc_str, l=27000 - problem_length)
        context_str = cut['string_after_cut']
        if len(doc_str) > 0:
            context_str = 'Documents:\n' + context_str
    else:
        context_str = code_attempt_str
    return context_str


def run_single(e: dict[str, Any], world: World, frames: bool) -> dict[str, Any]:
    """One task: -> {'chats': each round's (chat, tools), 'tool_calls': the calls run, 'pred': the answer}."""
    doc_list: list[str] = []
    code_list: list[dict[str, str]] = []
    problem = e['question']
    user_problem = problem
    final_pred = None
    chats = []
    ran = []
    tool_arguments: Any = None
    for _step in range(world.MAX_ROUNDS):
        tools = []
        for t in world.raw_tools:
            if frames and len(doc_list) > 0:
                if t['function']['name'] != 'search':
                    tools.append(t)
            else:
                tools.append(t)
        context_str = orchestrator_context_str(problem, doc_list, code_list, frames)
        last = "Choose an appropriate tool." if frames else "Choose an appropriate tool.'"
        chat = [
            {"role": "system", "content": "You are good at using tools."},
            {"role": "user", "content": f"Problem: {problem}\n\n{context_str}\n\n{last}"}
        ]
        chats.append((chat, tools))
        response = world.orchestrator(chat, tools)
        if isinstance(response, str):
            continue
        tool_calls = response.choices[0].message.tool_calls
        if len(tool_calls) == 0:
            continue
        tool_call_list = []
        processed_tools = set()
        for one_tool_call in tool_calls:
            tool_name = one_tool_call.function.name
            try:
                tool_arguments = json.loads(one_tool_call.function.arguments)
            except:  # noqa: E722 (released)
                pass
            if tool_name not in ALL_TOOLS:
                continue
            func_signature = ALL_TOOLS[tool_name]
            valid_tool_call = True
            for parameter_name, parameter_values in func_signature.items():
                if parameter_name not in tool_arguments:
                    valid_tool_call = False
                    if frames:
                        continue
                # HLE reads the missing argument here and raises KeyError: the whole evaluation stops
                if (tool_arguments[parameter_name] not in parameter_values) and parameter_values != 'any':
                    valid_tool_call = False
            if not valid_tool_call:
                continue
            if tool_name in processed_tools:
                continue
            processed_tools.add(tool_name)
            expert_model_to_call = MODEL_MAPPING[tool_arguments['model']]
            call_tool_argument = {
                'tool': tool_name,
                'model': expert_model_to_call,
                'context_str': expert_context_str(tool_name, expert_model_to_call, doc_list, code_list, user_problem,
                                                  frames),
                'problem': user_problem,
            }
            ran.append((tool_name, tool_arguments['model']))
            tool_call_list.append(call_tool_argument)
            if tool_name == 'answer':
                break
            break  # HLE: the only `break`; FRAMES: after the `answer` one, unconditional
        if len(tool_call_list) == 0:
            continue
        cur_responses = [call_tool(argument, world, frames) for argument in tool_call_list]
        finish_flag = False
        for cur_response in cur_responses:
            if cur_response['tool'] == 'enhance_reasoning':
                if len(cur_response['exec_result'].strip()) > 0:
                    code_list.append({'code': cur_response['generated_code'], 'output': cur_response['exec_result']})
            elif cur_response['tool'] == 'answer':
                final_pred = cur_response['pred'].strip()
                finish_flag = True
                break
            elif cur_response['tool'] == 'search':
                for one_doc in cur_response['search_results_data'][::-1]:
                    if one_doc not in doc_list:
                        doc_list.append(one_doc)
        if finish_flag:
            break
    return {'chats': chats, 'tool_calls': ran, 'pred': final_pred}
