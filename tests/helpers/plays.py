"""`Plays`: an orchestrator that plays fixed turns (what a trained model would write), for rollout tests."""

from __future__ import annotations

from typing import Any


class Plays:
    """Plays `turns` in order, one per turn or round, whatever it observes."""

    name = "test:plays"

    def __init__(self, *turns: str) -> None:
        self.turns = list(turns)

    def session(self, task: Any, specs: Any, seed: int) -> Any:
        from lab.policies.scripted import _ScriptSession

        def script():
            for turn in self.turns:  # noqa: UP028 - the session send()s observations, which a list iterator refuses
                yield turn
        return _ScriptSession(script())
