"""The stateful-domain core: what every tool domain with a database shares, below all of them.

Three stacks run tools over a JSON database that each rollout copies and changes: the offline
world's bookshop (`lab.world.bookshop`), tau2-bench retail (`lab.benchmarks.tau2_retail`) and the
ToolScale domains (`lab.synth`). They differ in their tools and data, not in how a rollout holds its
state, how a call is reported, how a trajectory's end state is rebuilt or how it is graded, so that
lives here, once:

- `lab.env.errors`: `ToolRefused`, the one error a tool raises to refuse a call;
- `lab.env.state`: a rollout's `Session`, `clone` and tau2's `canonical_hash`;
- `lab.env.environment`: `Environment`, a named set of tools over a database (`call`, `run_chain`);
- `lab.env.schema`: typed tools (`Tool`, `Toolbox`): schemas from hints and docstrings, argument checks;
- `lab.env.adapter`: `EnvTool`, an environment's tool behind the lab's Tool interface, per rollout;
- `lab.env.replay`: replaying writes, running golden actions, and the per-task expected-state cache;
- `lab.env.grading`: tau2's criteria (db, actions, communicate, NL assertions) and the world's check;
- `lab.env.calculator`: tau2's calculator, the generic tool every domain offers;
- `lab.env.layout`: the file names of a tau2 domain folder.

Why a package of its own: the domains sit in `lab.world`, `lab.benchmarks` and `lab.synth`, and none
of those may import another for these parts; `lab.env` imports none of them (only `lab.errors`,
`lab.toolspec` and `lab.tools.base`), so data flows one way.
"""
