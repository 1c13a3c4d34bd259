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
