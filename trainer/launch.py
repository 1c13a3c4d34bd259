"""`orchestra train --nproc N`: start N ranks of `python -m orchestra train ...` on this machine (torchrun's
launcher, in-process) and, when one of them fails, say which in one line.

Why not only document `torchrun`: it works too (`torchrun --nproc_per_node N -m orchestra train ...`, and
across nodes with `--nnodes`), but when a rank dies it prints the elastic agent's log and a failure table;
this prints the rank that failed first, how (exit code or signal), and the command that resumes.
"""

from __future__ import annotations

import logging
import shlex
import signal
from collections.abc import Sequence

from lab.errors import LabInputError


def _how(exitcode: int) -> str:
    if exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


def launch(nproc: int, train_args: Sequence[str]) -> None:
    """Run `orchestra train <train_args>` on `nproc` ranks here; returns when all finished, raises
    `LabInputError` naming the first rank that failed (the launcher has stopped the others by then)."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    for name in ("torch.distributed.elastic", "torch.distributed.run"):  # its log lines say what our one line says
        logging.getLogger(name).setLevel(logging.CRITICAL)
    args = parse_args(["--nproc-per-node", str(nproc), "--standalone", "--module", "orchestra", "train",
                       *train_args])
    try:
        run(args)
    except ChildFailedError as failed:
        rank, failure = failed.get_first_failure()
        resume = [a for a in train_args if a != "--resume"]
        command = shlex.join(["orchestra", "train", *resume, "--nproc", str(nproc), "--resume"])
        raise LabInputError(f"rank {rank} of {nproc} (pid {failure.pid}) {_how(failure.exitcode)}; the other ranks "
                            f"were stopped. Resume from the last checkpoint: {command}") from None
