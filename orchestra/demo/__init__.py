"""The one-command demo (`orchestra demo`): train, evaluate, analyse and show, offline on 2 CPU cores.

`plan` says what the demo runs (names, orchestrators, sizes), `stages` runs it (every stage reuses
finished work, so a second demo reaches the dashboard in seconds), and `findings` turns the store into
the short summary the demo prints (Pareto frontier, learned routing, preference-driven spending).
"""
