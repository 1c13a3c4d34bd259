"""The top of Orchestra Lab: the `orchestra` command (`orchestra.cli`) and the one-command demo (`orchestra.demo`).

Why a package above `lab` and `trainer`: the command and the demo drive both, so they sit over both and
nothing below imports them (the layers are listed, and checked, in `tests/test_imports.py`).
"""
