"""The rollout engine: one multi-turn loop shared by evaluation and training."""

from lab.rollout.config import RolloutConfig
from lab.rollout.engine import Grader, RolloutRequest, RolloutResult, run_rollout
from lab.rollout.parse import ParsedTurn, ToolCall, format_tool_call, parse_turn
from lab.rollout.policy import Policy, PolicyOutput, PolicySession, TaskView, TokenTrajectory

__all__ = [
    "Grader", "ParsedTurn", "Policy", "PolicyOutput", "PolicySession", "RolloutConfig", "RolloutRequest",
    "RolloutResult", "TaskView", "TokenTrajectory", "ToolCall", "format_tool_call", "parse_turn", "run_rollout",
]
