"""The offline world: a generated corpus, FRAMES/HLE/tau2-like tasks and a bookshop tool domain.

Entry points: `lab.world.build.build_world` / `load_world` (cached build), `lab.world.task.WorldTask`,
`lab.world.domain_tools.make_domain_tools` and `lab.graders.grade`. Kept import-free so that reading
`WorldTask` does not pull in the generators.
"""
