"""A model tool served by vLLM: SmolLM2-135M-Instruct's real weights answer as the paper toolkit's `answer-1`.

The orchestrator (the fitted caller, itself on vLLM) calls `answer` with slot `answer-1`; the slot's
backend is an `openai` tool pointing at a second vLLM server. The answer stored is what SmolLM2 wrote,
and the tokens and price charged for the call are the ones that server counted.
"""

from __future__ import annotations

import duckdb
import pytest
import yaml

from tests.conftest import orchestra

pytestmark = pytest.mark.slow

#: Invented for the test: what the slot is charged per 1M tokens, so the cost can be checked by hand.
INPUT_PER_MTOK, OUTPUT_PER_MTOK = 0.5, 2.0


def test_an_answer_slot_served_by_vllm_answers_with_the_real_model(caller_server, smollm2_server, tmp_path):
    toolkit = tmp_path / "served.yaml"
    toolkit.write_text(yaml.safe_dump({"name": "served", "tools": [
        {"name": "answer", "backend": {"kind": "paper", "role": "answer", "slots": {
            "answer-1": {"name": "smollm2", "input_per_mtok": INPUT_PER_MTOK, "output_per_mtok": OUTPUT_PER_MTOK,
                         "backend": {"kind": "openai", "base_url": smollm2_server.base_url, "model": "smollm2",
                                     "max_tokens": 32, "temperature": 0}}}}}]}))
    db = tmp_path / "runs.duckdb"
    prompt_before = smollm2_server.metric("vllm:prompt_tokens_total")
    result = orchestra("eval", "--benchmark", "world:frames", "--limit", "2", "--toolkit", str(toolkit),
                       "--orchestrator", f"openai:caller@{caller_server.base_url}", "--protocol", "rounds",
                       "--max-new-tokens", "48", db=db)
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        answers = con.execute("SELECT final_answer FROM trajectories").fetchall()
        steps = con.execute("SELECT model, input_tokens, output_tokens, cost_usd, simulated FROM steps "
                            "WHERE kind = 'tool'").fetchall()
    assert len(answers) == 2 and all(a and a.strip() for (a,) in answers)
    assert len(steps) == 2
    for model, input_tokens, output_tokens, cost, simulated in steps:
        assert model == "smollm2" and not simulated
        assert 0 < output_tokens <= 32
        assert cost == pytest.approx((input_tokens * INPUT_PER_MTOK + output_tokens * OUTPUT_PER_MTOK) / 1e6)
    assert sum(s[1] for s in steps) == smollm2_server.metric("vllm:prompt_tokens_total") - prompt_before


def test_a_served_expert_receives_the_released_messages(caller_server, smollm2_server, tmp_path):
    """Slot `answer-1` stands for Qwen3-32B (SmolLM2's weights behind it): under the round protocol the server
    is sent the released Qwen answer messages, the `\\boxed{}` system message and `Problem:` after the (here
    empty) context, and counts exactly their tokens."""
    from transformers import AutoTokenizer

    from lab.tools.experts import BOXED_SYSTEM
    from lab.tools.local_llm import converted_dir, smollm2_gguf_path
    from lab.world.build import build_world

    toolkit = tmp_path / "served.yaml"
    toolkit.write_text(yaml.safe_dump({"name": "served", "tools": [
        {"name": "answer", "backend": {"kind": "paper", "role": "answer", "context_tokens": {"answer-1": 4000},
                                       "slots": {"answer-1": {
            "name": "qwen3-32b", "model": "qwen3-32b", "input_per_mtok": INPUT_PER_MTOK,
            "output_per_mtok": OUTPUT_PER_MTOK,
            "backend": {"kind": "openai", "base_url": smollm2_server.base_url, "model": "smollm2", "max_tokens": 16,
                        "context_window": 8192}}}}}]}))
    db = tmp_path / "runs.duckdb"
    prompt_before = smollm2_server.metric("vllm:prompt_tokens_total")
    result = orchestra("eval", "--benchmark", "world:frames", "--limit", "2", "--toolkit", str(toolkit),
                       "--orchestrator", f"openai:caller@{caller_server.base_url}", "--protocol", "rounds",
                       "--max-new-tokens", "48", db=db)
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        task_ids = [t for (t,) in con.execute("SELECT task_id FROM trajectories ORDER BY task_id").fetchall()]
        stored = con.execute("SELECT sum(input_tokens) FROM steps WHERE kind = 'tool'").fetchone()[0]
    questions = {t.task_id: t.question for t in build_world(progress=False).tasks}
    tokenizer = AutoTokenizer.from_pretrained(str(converted_dir(smollm2_gguf_path())))
    expected = sum(len(tokenizer.apply_chat_template(
        [{"role": "system", "content": BOXED_SYSTEM}, {"role": "user", "content": "\n\nProblem:\n" + questions[t]}],
        add_generation_prompt=True, tokenize=True)["input_ids"]) for t in task_ids)
    assert smollm2_server.metric("vllm:prompt_tokens_total") - prompt_before == expected == stored
