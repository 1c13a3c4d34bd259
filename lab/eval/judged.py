"""`--judge TOOL`: an evaluation's grader with a judge model behind it, on every benchmark that has answers to judge.

- Question answering (FRAMES, HLE, the offline world's frames- and hle-like tasks): the released rule,
  `lab.judge.exact_then_judge`: the model-free grade first, the judge only when it fails, asked with the
  run's `--judge-prompt` (the released prompt under the released expert protocol, else the lab's).
- tau2 (and the offline world's shop): the NL assertions the grader left unjudged, over the whole
  conversation (`lab.env.grading.judge_nl`).
- BFCL: nothing to judge (its AST check is the grade).

Every judge call is made with a context of its own (the task and the rollout's seed: a simulated judge
needs the task, and no judge reads the rollout's transcript) and recorded in the rollout's context, and
both grades are left there (`ToolContext.verdicts`): the engine stores them as the trajectory's
`exact_correct` / `judge_correct`, and the calls as steps of kind `judge` whose cost is `judge_cost_usd`,
never part of `cost_usd`, so a report can give accuracy both ways and the judge's cost apart.

The outcome follows the judge: that is how the released evaluation scores FRAMES and HLE, so the paper's
numbers are judged numbers, and accuracy, preference score and Pareto points then compare with them.
The model-free grade stays in `exact_correct`. Training rewards never call a judge (the trainer's
grader is the model-free one): a policy optimised against a judge model learns to please that model.
Privileged scripts (`scripted:oracle`, `scripted:best-route`) probe their plans with the model-free
grader too, so the judge grades only stored rollouts and every judge call is one a report counts.
"""

from __future__ import annotations

from typing import Any

from lab.judge import JUDGED_TYPES, JudgePrompt, exact_then_judge
from lab.rollout.engine import Grader
from lab.task import Task
from lab.tools.base import CONVERSATION, JudgeCall, Observation, ToolContext


class RecordedJudge:
    """The judge tool as one rollout's grader calls it: with its own context, every call recorded."""

    def __init__(self, tool: Any, rollout: ToolContext) -> None:
        self.tool, self.spec, self.rollout = tool, tool.spec, rollout
        self.own = ToolContext(task_id=rollout.task_id, task=rollout.task, seed=rollout.seed)

    async def execute(self, arguments: dict[str, Any], context: ToolContext | None = None) -> Observation:
        observation = await self.tool.execute(arguments, self.own)
        self.rollout.judge_calls.append(JudgeCall(self.spec.name, str(arguments.get("prompt", "")), observation))
        return observation


def judged(grader: Grader, tool: Any, prompt: JudgePrompt = "lab") -> Grader:
    """`grader`, then the judge `tool` where the task has something to judge (module docstring), asked with
    the lab's or the released `prompt` (`lab.judge`); raises `lab.errors.JudgeError` when the judge gives
    no verdict."""

    async def graded(task: Task, answer: str | None, context: ToolContext) -> float:
        outcome = await grader(task, answer, context)
        exact = outcome >= 1.0
        judge = RecordedJudge(tool, context)
        if task.answer_type in JUDGED_TYPES:
            outcome = float(await exact_then_judge(judge, task, answer or "", exact, prompt=prompt))
        else:
            outcome = await _judge_nl(task, answer, context, judge, outcome)
        context.verdicts = {"exact": exact, "judge": outcome >= 1.0}
        return outcome

    return graded


async def _judge_nl(
    task: Task, answer: str | None, context: ToolContext, judge: RecordedJudge, outcome: float
) -> float:
    """tau2: the judge on the NL assertions the grader left unjudged; a reply that is not the asked JSON
    leaves them unjudged (null in `criteria_json`, counted as `unjudged` by reports), as without a judge."""
    from lab.env.grading import judge_nl, outcome_of

    assertions = (getattr(task, "meta", None) or {}).get("nl_assertions")
    if context.criteria is None or context.criteria.get("nl") is not None or not assertions:
        return outcome
    verdict, problem = await judge_nl(judge, assertions, context.state.get(CONVERSATION, []))
    context.criteria["nl"] = verdict
    if problem:
        context.criteria["nl_problem"] = problem  # shown with the trajectory: a broken judge is visible
    return outcome_of(context.criteria, task.meta.get("reward_basis")) if answer is not None else 0.0


def settle_unanswered(trajectory: Any) -> None:
    """A judged run's rollout that was never graded (no answer, a failed policy) is wrong by the judge
    rule too: its `judge_correct` is False, so accuracy by judge counts every finished rollout."""
    if trajectory.judge_correct is None and trajectory.status != "cut":
        trajectory.judge_correct = False
