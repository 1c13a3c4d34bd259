"""`orchestra eval --orchestrator openai:...@<a real vLLM server>` under both rollout protocols.

The server parses the calls itself (`--tool-call-parser hermes`) when the round protocol sends
`tools=`; under the conversation protocol the lab parses the `<tool_call>` text. Either way the run
must end every task with the one call the served model makes, and the tokens the store logs must be
the tokens the server counted (its own Prometheus counters, not the response bodies the lab read).
"""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.conftest import orchestra
from trainer.fixed_caller import CALL


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["rounds", "conversation"])
def test_an_evaluation_through_vllm_ends_each_task_with_the_served_call(caller_server, tmp_path, protocol):
    db = tmp_path / "runs.duckdb"
    prompt_before = caller_server.metric("vllm:prompt_tokens_total")
    generated_before = caller_server.metric("vllm:generation_tokens_total")
    result = orchestra("eval", "--benchmark", "world:frames", "--limit", "3", "--toolkit", "paper-small",
                       "--orchestrator", f"openai:caller@{caller_server.base_url}", "--protocol", protocol,
                       "--max-new-tokens", "48", db=db)
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT tool_counts_json, status, format_ok, input_tokens, output_tokens, error "
                           "FROM trajectories").fetchall()
        config = json.loads(con.execute("SELECT config_json FROM runs").fetchone()[0])
    assert config["protocol"] == protocol
    assert len(rows) == 3
    for counts, status, format_ok, _, _, error in rows:
        assert json.loads(counts) == {CALL["arguments"]["model"]: 1}, error
        assert format_ok and status == "answered", (status, error)
    assert sum(r[3] for r in rows) == caller_server.metric("vllm:prompt_tokens_total") - prompt_before
    assert sum(r[4] for r in rows) == caller_server.metric("vllm:generation_tokens_total") - generated_before
