"""The training environment (`trainer.environment`): `task_limit` cuts the tasks a run trains on, and
never an evaluation of the training split."""

from __future__ import annotations

from trainer.config import OrchestraGRPOConfig
from trainer.environment import TrainingEnvironment


def test_task_limit_cuts_training_tasks_but_not_an_evaluation_of_the_train_split(tmp_path, world):
    config = OrchestraGRPOConfig(output_dir=str(tmp_path / "out"), toolkit="paper", families=["frames", "hle"],
                                 task_limit=3, report_to="none")
    training = TrainingEnvironment(config)
    evaluation = TrainingEnvironment(config, split=config.train_split)
    assert len(training.tasks) == 3
    assert len(evaluation.tasks) > 3 and set(training.tasks) < set(evaluation.tasks)
