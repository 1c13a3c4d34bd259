"""The files of a tau2 domain folder, as tau2-bench lays one out and the lab reads and writes it.

Why here: the tau2 loader (`lab.benchmarks.tau2`), the ToolScale exporter (`lab.synth.export`) and
the ToolScale environment (`lab.synth.env`) all name these files, and the last two must not import
the benchmarks package.
"""

TASKS_FILE = "tasks.json"
SPLITS_FILE = "split_tasks.json"
DB_FILE = "db.json"
POLICY_FILE = "policy.md"
