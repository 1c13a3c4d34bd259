"""Metrics, tables and figures over logged runs: one home shared by the CLI, notebooks and the app."""
