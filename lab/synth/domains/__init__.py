"""Synthetic ToolScale domains, one module per domain (`bank.py`) and one for its task templates (`bank_tasks.py`)."""
