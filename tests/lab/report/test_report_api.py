"""`load_report` over a real store: the tables a user gets for runs logged by the harness."""

from __future__ import annotations

import json

import pytest

from lab.errors import LabInputError
from lab.report.api import load_report, run_info_frame
from lab.records import RunRecord
from tests_support_none import *  # noqa: F401,F403  (placeholder removed below)
