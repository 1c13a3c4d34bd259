"""Orchestra Lab: train and study small orchestrator LLMs (ToolOrchestra, arXiv 2511.21689).

Core pieces live one job per module: `lab.pricing` (price tables), `lab.toolspec` (tool specs and
toolkits), `lab.preference` (preference vectors), `lab.reward` (Eq. 2 and GRPO advantages),
`lab.store` (the DuckDB trajectory store). The `orchestra` command and the demo sit above the lab and
the trainer, in the `orchestra` package (`orchestra.cli`, `orchestra.demo`).
"""

__version__ = "0.1.0"
