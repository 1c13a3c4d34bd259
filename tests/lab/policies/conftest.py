"""Fixtures of the policy tests."""

from __future__ import annotations

import pytest
import torch

from lab.eval.config import EvalConfig
from lab.eval.sources import load_source
from lab.toolkit import build_tools, load_toolkit


@pytest.fixture(scope="module")
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: extra threads only contend on a shared 2-core machine
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def offline(world):
    source = load_source(EvalConfig(benchmark="world", split="test", limit=30))
    toolkit = load_toolkit("default")
    return source, build_tools(toolkit.subset([n for n in toolkit.names if n != "smollm2"]))


@pytest.fixture(scope="module")
def offline_paper(world):
    source = load_source(EvalConfig(benchmark="world", split="test", limit=15))
    return source, build_tools(load_toolkit("paper"))
