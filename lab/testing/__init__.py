"""Test helpers shipped with the lab, so tests of every package (and users) share one fake world.

`OpenAICompatServer` is a real HTTP server speaking the OpenAI chat-completions protocol on 127.0.0.1,
scriptable enough to exercise retries, timeouts and tool-calling policies without any network.
"""

from lab.testing.openai_server import OpenAICompatServer, ServerBehaviour, unused_port

__all__ = ["OpenAICompatServer", "ServerBehaviour", "unused_port"]
