"""GRPO through the lab's engine, end to end on CPU: a tiny Qwen3 whose turns are scripted per rollout
(so groups mix tool calls, cheap and dear answers and malformed calls), run by the real trainer, store
and callbacks. What a user would check afterwards: tool output never trained on, filtered rows carry no
gradient, rewards and advantages recomputable from the logged features, one metrics row per step,
`--resume` continues, and a step whose rows are all filtered leaves the weights untouched. On synthesized
ToolScale tasks (`benchmark: toolscale:DIR`, the folder `orchestra synth` wrote), each rollout talks to
the scripted user (its opening is the prompt, its replies are logged steps), calls the domain's own tools
on a private database, and is graded by tau2's criteria."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from lab.errors import LabInputError
from lab.report.curve import learning_curve_df
from lab.report.metrics.curve import fixed_scale
from lab.reward import rescore
from lab.store import Store, queries
from lab.synth.dataset import write_dataset
from tests.conftest import TINY_MODEL
from trainer.config import OrchestraGRPOConfig
from trainer.evidence import training_pulls
from trainer.grpo import OrchestraGRPOTrainer
from trainer.metrics import metric_doc
from trainer.train import run_training

pytestmark = pytest.mark.slow


# rollout seed % 4 -> the turns its orchestrator "samples"
SCRIPTS = {
    0: ['<tool_call>{"name": "answer", "arguments": {"model": "answer-1"}}</tool_call>'],
    1: ['<tool_call>{"name": "answer", "arguments": {"model": "answer-4"}}</tool_call>'],
    2: ['<tool_call>{"name": "search", "arguments": {"model": "search-2"}}</tool_call>',
        '<tool_call>{"name": "answer", "arguments": {"model": "answer-2"}}</tool_call>'],
    3: ['<tool_call>{"name": "answer", "arguments": {"model": oops</tool_call>',
        '<tool_call>{"name": "answer", "arguments": {"model": "answer-1"}}</tool_call>'],
}
BROKEN = {k: ['<tool_call>{"name": nope</tool_call>'] for k in range(4)}


class ScriptedSampler:
    """Stands in for the batched sampler of one session: returns the script's next turn as token ids."""

    def __init__(self, session, script: list[str]) -> None:
        self.session, self.script = session, script

    async def sample(self, request):
        text = self.script[min(request.turn, len(self.script)) - 1]
        tokenizer = self.session.tokenizer
        ids = tokenizer(text, add_special_tokens=False).input_ids + [self.session.eot_id]
        return ids, [-0.5] * len(ids)


def scripted(scripts):
    original = OrchestraGRPOTrainer.rollout_policy

    def rollout_policy(self, model):
        policy = original(self, model)
        make_session = policy.session

        def session(task, specs, seed):
            live = make_session(task, specs, seed)
            live.sampler = ScriptedSampler(live, scripts[seed % 4])
            return live

        policy.session = session
        return policy

    return rollout_policy


def config(tmp_path, **overrides) -> OrchestraGRPOConfig:
    values = dict(
        output_dir=str(tmp_path / "out"), run_name="test", model="tiny-qwen3", tiny_model=TINY_MODEL, toolkit="paper",
        families=["frames", "hle"], task_limit=6, examples_per_task=2, tool_subset_min=1.0, max_turns=3,
        turn_max_new_tokens=32, observation_chars=200, num_generations=4, per_device_train_batch_size=16,
        learning_rate=1e-2, max_steps=2, save_steps=2, lab_eval_steps=0, lab_eval_limit=2, report_to="none",
        gradient_checkpointing=False, seed=0, lab_eval_instructions=["outcome=1,compute=1"],
    )
    return OrchestraGRPOConfig(**{**values, **overrides})


BATCHES: list[dict] = []  # every generation batch the trainer trained on, as TRL received it


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grpo")
    store = Store(tmp / "store.duckdb")
    generate = OrchestraGRPOTrainer._generate_and_score_completions

    def recorded(self, inputs):
        output = generate(self, inputs)
        BATCHES.append({k: v.clone() if torch.is_tensor(v) else v for k, v in output.items()})
        return output

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(SCRIPTS))
        patch.setattr(OrchestraGRPOTrainer, "_generate_and_score_completions", recorded)
        summary = run_training(config(tmp), store, Console(quiet=True))
    return tmp, store, summary


def test_every_rollout_is_logged_with_reward_advantage_and_filter_reason(trained):
    _, store, summary = trained
    runs = queries.runs_df(store).set_index("run_id")
    assert runs.loc[summary.run_id, "kind"] == "train" and runs.loc[summary.run_id, "status"] == "finished"
    trajs = queries.trajectories_df(store, [summary.run_id])
    assert sorted(trajs.train_step.unique()) == [1, 2] and len(trajs) == 32
    assert trajs.reward.notna().all() and trajs.advantage.notna().all()
    assert set(trajs.filter_reason.dropna()) <= {"format", "invalid", "homogeneous"}
    assert (trajs.filter_reason == "format").sum() >= 2  # script 3 writes a malformed call
    # the learning curve's evaluations are eval runs linked to the train run, at step 0 and the last step
    evals = runs.loc[summary.eval_run_ids]
    assert (evals.kind == "eval").all()
    assert [json.loads(c)["train_step"] for c in evals.config_json] == [0, 2]
    assert all(json.loads(c)["train_run_id"] == summary.run_id for c in evals.config_json)


def test_the_learning_curve_evaluates_the_same_tasks_and_seeds_at_step_0_and_after_the_last_step(trained):
    _, store, summary = trained
    configs = {json.loads(c)["train_step"]: json.loads(c)
               for c in queries.runs_df(store).set_index("run_id").loc[summary.eval_run_ids].config_json}
    same = ("tasks", "seed", "samples", "temperature", "top_p", "preferences", "max_turns")
    assert all(configs[0][k] == configs[2][k] for k in same) and configs[0]["temperature"] == 1.0  # sampled
    first, last = (queries.trajectories_df(store, [r]) for r in summary.eval_run_ids)
    assert list(first.task_id) == list(last.task_id) == sorted(configs[0]["tasks"]) and len(first) == 2
    # the scale of U is fixed from step 0 and stored with the train run: every point uses it
    stored = json.loads(queries.run(store, summary.run_id).config_json)["curve_scale"]
    assert stored == fixed_scale(first, basis="step 0").as_dict() and stored["l_ref"] > 0
    curve = learning_curve_df(store, summary.run_id, n_resamples=100)
    assert {0, 2} <= set(curve.step) and set(curve.instruction) == {"outcome=1,compute=1"}
    assert curve.attrs["scale"] == stored


def test_rewards_and_advantages_recompute_from_the_logged_features(trained):
    _, store, summary = trained
    trajs = queries.trajectories_df(store, [summary.run_id])
    features = [n for n in json.loads(trajs.preference_json.iloc[0]) if n not in ("outcome", "compute", "latency")]
    P = np.array([[json.loads(p)[n] for n in [*features, "outcome", "compute", "latency"]]
                  for p in trajs.preference_json])
    counts = [{k: v for k, v in json.loads(c).items() if k in features} for c in trajs.tool_counts_json]
    passed = ~trajs.filter_reason.isin(["format", "invalid"]).to_numpy()
    R, A, keep = rescore(counts, trajs.outcome, trajs.cost_usd, trajs.latency_s, features, P,
                         list(trajs.group_id), passed=passed)
    np.testing.assert_allclose(trajs.reward, R, atol=1e-9)
    np.testing.assert_allclose(trajs.advantage, A, atol=1e-6)
    assert (trajs.filter_reason.isna().to_numpy() == keep).all()


def test_tool_output_carries_mask_0_and_model_turns_mask_1(trained):
    _, store, summary = trained
    tokenizer = summary.trainer.processing_class
    tokens = store._read("SELECT * FROM token_trajectories WHERE run_id = ?", [summary.run_id])
    assert len(tokens) == 32
    saw_tool = False
    for row in tokens.itertuples():
        ids, mask = list(row.completion_ids), list(row.mask)
        trained_text = tokenizer.decode([i for i, m in zip(ids, mask) if m], skip_special_tokens=False)
        other_text = tokenizer.decode([i for i, m in zip(ids, mask) if not m], skip_special_tokens=False)
        assert "<tool_response" not in trained_text and "<tool_call>" in trained_text
        saw_tool |= "<tool_response" in other_text
        assert ids[-1] == tokenizer.eos_token_id  # every row ends on the end-of-turn token
    assert saw_tool


def test_filtered_rows_carry_no_gradient(trained):
    _, _, summary = trained
    trainer = summary.trainer
    def kept_rows(batch):
        return (batch["tool_mask"] * batch["completion_mask"]).sum(1) > 0

    mixed = [b for b in BATCHES if kept_rows(b).any() and not kept_rows(b).all()]
    assert mixed, "no step mixed kept and filtered rows"
    inputs = mixed[0]
    kept = kept_rows(inputs)

    def grads(batch):
        trainer.model.zero_grad(set_to_none=True)
        trainer.compute_loss(trainer.model, batch).backward()
        return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])

    base = grads(inputs)
    changed = {**inputs, "completion_ids": inputs["completion_ids"].clone()}
    dropped = torch.nonzero(~kept).flatten()[0]
    changed["completion_ids"][dropped] = (changed["completion_ids"][dropped] + 7) % 1000
    assert torch.allclose(base, grads(changed))
    # the test can fail: changing a kept row does change the gradient (its advantage: its tokens, changed, would
    # be far off the sampler's log-probabilities, the old ones of Eq. 4, and clipped away)
    first_kept = torch.nonzero(kept).flatten()[0]
    changed["advantages"] = inputs["advantages"].clone()
    changed["advantages"][first_kept] = -inputs["advantages"][first_kept]
    assert not torch.allclose(base, grads(changed))


def test_the_update_skips_filtered_rows_without_changing_the_gradient(trained, monkeypatch):
    """Filtered rows are cut from the forward and backward passes (they only cost time): the gradient
    equals TRL's over the whole micro-batch, and the forward pass sees the kept rows only."""
    from trl import GRPOTrainer

    trainer = trained[2].trainer
    inputs = next(b for b in BATCHES
                  if 0 < int(((b["tool_mask"] * b["completion_mask"]).sum(1) > 0).sum()) < len(b["advantages"]))
    kept = int(((inputs["tool_mask"] * inputs["completion_mask"]).sum(1) > 0).sum())

    def grads(loss_of):
        trainer.model.zero_grad(set_to_none=True)
        loss = loss_of(trainer.model, inputs)
        loss.backward()
        return loss.detach(), torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])

    with monkeypatch.context() as trl_only:
        trl_only.setattr(trainer.args, "shared_prompt_forward", False)
        full_loss, full = grads(lambda model, batch: GRPOTrainer.compute_loss(trainer, model, batch))
    rows_seen = []
    forward = trainer._get_per_token_logps_and_entropies
    monkeypatch.setattr(trainer, "_get_per_token_logps_and_entropies",
                        lambda model, input_ids, *a, **k:
                        rows_seen.append(input_ids.shape[0]) or forward(model, input_ids, *a, **k))
    cut_loss, cut = grads(trainer.compute_loss)
    assert rows_seen == [kept]
    torch.testing.assert_close(cut_loss, full_loss, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(cut, full, rtol=1e-4, atol=1e-7)


def test_each_distinct_prompt_is_forwarded_once_with_trls_numbers(trained, monkeypatch):
    """The update forwards a group's shared prompt once: the log-probabilities, entropies and gradient are
    TRL's, and the prompt tokens fed are one copy per distinct prompt instead of one per row."""
    from trl import GRPOTrainer

    trainer = trained[2].trainer
    model = trainer.model
    batch = BATCHES[0]
    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    keep = batch["completion_ids"].size(1)
    prompts = {tuple(row) for row in torch.cat([batch["prompt_ids"], batch["prompt_mask"]], dim=1).tolist()}
    assert 1 < len(prompts) < len(ids), "the batch should hold groups of several prompts"
    fed = []
    hook = model.get_input_embeddings().register_forward_hook(
        lambda module, args, out: fed.append(tuple(args[0].shape)))
    try:
        def grads(pass_):
            model.zero_grad(set_to_none=True)
            logps, entropy, _ = pass_(model, ids, mask, keep, compute_entropy=True)
            (logps * batch["completion_mask"]).sum().backward()
            grad = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
            return logps.detach(), entropy.detach(), grad

        trl = grads(lambda *a, **k: GRPOTrainer._get_per_token_logps_and_entropies(trainer, *a, **k))
        assert fed == [tuple(ids.shape)]
        fed.clear()
        shared = grads(trainer._get_per_token_logps_and_entropies)
    finally:
        hook.remove()
    assert fed == [(len(prompts), batch["prompt_ids"].size(1)), (len(ids), keep)]
    for ours, theirs in zip(shared, trl):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
    # the test can fail: a shifted completion changes the numbers
    monkeypatch.setattr(trainer.args, "shared_prompt_forward", False)
    shifted = trainer._get_per_token_logps_and_entropies(model, ids.roll(1, dims=1), mask, keep)
    assert not torch.allclose(shared[0], shifted[0])


def test_a_micro_batch_is_cut_to_its_kept_rows_and_the_completion_columns_they_use():
    from trainer.grpo import kept_rows_only

    prompt_mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1]])        # left-padded
    completion_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])  # right-padded
    tool_mask = torch.tensor([[1, 0, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]])   # row 1 filtered
    batch = {"prompt_ids": torch.arange(12).view(3, 4), "prompt_mask": prompt_mask,
             "completion_ids": torch.arange(15).view(3, 5), "completion_mask": completion_mask, "tool_mask": tool_mask,
             "advantages": torch.tensor([0.5, 0.0, -0.5]), "num_items_in_batch": torch.tensor(5.0)}
    cut = kept_rows_only(batch, rows=2)
    assert cut["advantages"].tolist() == [0.5, -0.5]
    assert cut["prompt_ids"].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]  # prompts whole: positions unchanged
    assert cut["completion_ids"].tolist() == [[0, 1, 2], [10, 11, 12]]    # up to the last kept token
    assert cut["num_items_in_batch"] is batch["num_items_in_batch"]
    # ranks agree on a row count: padding rows come from the filtered ones; nothing kept still leaves one row
    assert kept_rows_only(batch, rows=3)["advantages"].tolist() == [0.5, -0.5, 0.0]
    nothing = kept_rows_only({**batch, "tool_mask": torch.zeros_like(tool_mask)}, rows=0)
    assert len(nothing["advantages"]) == 1 and nothing["tool_mask"].sum() == 0
    # tensors it does not know how to cut (an image batch) leave the micro-batch whole
    assert kept_rows_only({**batch, "pixel_values": torch.zeros(3, 2)}, rows=2)["prompt_ids"].shape == (3, 4)


def test_one_documented_metrics_row_per_step_and_resume_continues(trained):
    tmp, store, summary = trained
    metrics = queries.train_metrics_df(store, summary.run_id)
    assert list(metrics.step) == [1, 2]
    for name in metrics.columns.drop(["step", "created_at"]):
        assert metric_doc(name)
    assert (metrics["filtered/format"] > 0).all() and (metrics["time/rollout_s"] > 0).all()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(SCRIPTS))
        resumed = run_training(config(tmp, max_steps=3), store, Console(quiet=True), resume=True)
    assert resumed.run_id == summary.run_id and resumed.steps == 3
    assert list(queries.train_metrics_df(store, summary.run_id).step) == [1, 2, 3]
    # the resumed run evaluates its new last step; its step-0 point, already stored, is not repeated
    linked = queries.linked_evals_df(store, summary.run_id)
    assert linked.train_step.tolist() == [0, 2, 3] and linked.set_index("train_step").run_id[3] in resumed.eval_run_ids
    assert len(resumed.eval_run_ids) == 1
    assert "curve_scale" in json.loads(queries.run(store, summary.run_id).config_json)


def test_training_a_finished_run_again_is_refused_instead_of_overwriting_it(trained):
    tmp, store, summary = trained
    before = queries.train_metrics_df(store, summary.run_id)
    with pytest.raises(LabInputError, match="already finished.*--resume"):
        run_training(config(tmp), store, Console(quiet=True))
    assert queries.train_metrics_df(store, summary.run_id).equals(before)


def test_a_step_with_every_row_filtered_does_not_move_the_weights(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(BROKEN))
        summary = run_training(config(tmp_path, max_steps=1, lab_eval_limit=1, weight_decay=0.1), store,
                               Console(quiet=True))
    from transformers import AutoModelForCausalLM

    after = AutoModelForCausalLM.from_pretrained(summary.model_dir)
    initial = AutoModelForCausalLM.from_pretrained(summary.start_model)
    for a, b in zip(after.parameters(), initial.parameters()):
        assert torch.equal(a, b)
    metrics = queries.train_metrics_df(store, summary.run_id)
    assert metrics["update/skipped"].tolist() == [1.0] and metrics["filtered/all"].tolist() == [1.0]


def test_lora_trains_only_its_target_modules_and_saves_a_whole_model(tmp_path):
    """LoRA through TRL's peft_config: after a step, the saved model is a whole model (adapters merged) that
    any `hf:` reader loads; only the adapted projections moved, every other weight is the start's."""
    store = Store(tmp_path / "store.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(SCRIPTS))
        summary = run_training(config(tmp_path, max_steps=1, lab_eval_limit=1,
                                      lora={"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]}),
                               store, Console(quiet=True))
    from transformers import AutoModelForCausalLM

    after = dict(AutoModelForCausalLM.from_pretrained(summary.model_dir).named_parameters())
    initial = dict(AutoModelForCausalLM.from_pretrained(summary.start_model).named_parameters())
    assert set(after) == set(initial)   # no adapter left over: a plain model
    moved = {name for name in initial if not torch.equal(after[name], initial[name])}
    assert moved and all(name.endswith(("q_proj.weight", "v_proj.weight")) for name in moved), moved


def test_a_lora_naming_a_module_the_model_lacks_is_one_line_before_training(tmp_path):
    store = Store(tmp_path / "store.duckdb")
    with pytest.raises(LabInputError) as info:
        run_training(config(tmp_path, lora={"r": 4, "target_modules": ["c_attn"]}), store, Console(quiet=True))
    message = str(info.value)
    assert message.startswith("lora.target_modules: 'c_attn' is no module of Qwen3ForCausalLM") and "q_proj" in message
    assert "\n" not in message and queries.runs_df(store).empty   # refused before the run was written


FREE_FORM = """name: free-form-test
tools:
  - {name: "sim:gpt-5", backend: {kind: sim, profile: gpt-5}}
  - {name: "sim:gpt-5-mini", backend: {kind: sim, profile: gpt-5-mini}}
  - {name: "sim:qwen3-32b", backend: {kind: sim, profile: qwen3-32b}}
"""
FREE_FORM_SCRIPTS = {
    0: ['<tool_call>{"name": "sim:gpt-5", "arguments": {"prompt": "Answer the question."}}</tool_call>',
        "<answer>Heveth</answer>"],
    1: ['<tool_call>{"name": "sim:qwen3-32b", "arguments": {"prompt": "Answer the question."}}</tool_call>',
        "<answer>1/8</answer>"],
    2: ["<answer>42</answer>"],
    3: ['<tool_call>{"name": "sim:gpt-5-mini", "arguments": {"prompt": "Answer."}}</tool_call>',
        "<answer>2326</answer>"],
}


def test_free_form_toolkits_train_too(tmp_path):
    """The other toolkit shape: free-form model tools are the reward features, counted per tool."""
    toolkit = tmp_path / "free-form.yaml"
    toolkit.write_text(FREE_FORM)
    store = Store(tmp_path / "store.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(FREE_FORM_SCRIPTS))
        summary = run_training(config(tmp_path, toolkit=str(toolkit), tool_subset_min=0.6, max_steps=1,
                                      lab_eval_limit=1), store, Console(quiet=True))
    trajs = queries.trajectories_df(store, [summary.run_id])
    counted = set().union(*(json.loads(c) for c in trajs.tool_counts_json))
    assert counted and counted <= {"sim:gpt-5", "sim:gpt-5-mini", "sim:qwen3-32b"}
    prefs = [json.loads(p) for p in trajs.preference_json]
    assert all(list(p)[:3] == ["sim:gpt-5", "sim:gpt-5-mini", "sim:qwen3-32b"] for p in prefs)
    metrics = queries.train_metrics_df(store, summary.run_id)
    assert {"tools/share/sim:gpt-5", "tools/share/sim:qwen3-32b"} <= set(metrics.columns)


# every ToolScale rollout: a calculator call, an answer to the user, a question back
TOOLSCALE_TURNS = ['<tool_call>{"name": "calculate", "arguments": {"expression": "2 * 21"}}</tool_call>',
                   "Thanks, that is all done for you.", "Is there anything else?"]


def test_training_steps_on_toolscale_tasks_talk_to_the_user(tmp_path, monkeypatch):
    write_dataset(tmp_path / "ts", ["bank", "railway"], n_tasks=3, seed=0)
    monkeypatch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted({k: TOOLSCALE_TURNS for k in range(4)}))
    config = OrchestraGRPOConfig(
        output_dir=str(tmp_path / "out"), run_name="ts", model="tiny-qwen3", tiny_model=TINY_MODEL, toolkit="paper",
        benchmark=f"toolscale:{tmp_path / 'ts'}", task_limit=2, examples_per_task=1, tool_subset_min=1.0, max_turns=3,
        turn_max_new_tokens=32, observation_chars=200, num_generations=2, per_device_train_batch_size=4,
        learning_rate=1e-3, max_steps=1, save_steps=10, lab_eval_steps=0, lab_eval_limit=1, report_to="none",
        eval_split="test",
        gradient_checkpointing=False, seed=0, lab_eval_instructions=["outcome=1"])
    store = Store(tmp_path / "s.duckdb")
    summary = run_training(config, store, Console(quiet=True))

    trajs = queries.trajectories_df(store, [summary.run_id])
    assert len(trajs) == 4 and set(trajs.benchmark) == {"toolscale"}
    assert all(set(json.loads(c)) == {"db", "communicate", "actions", "nl"} for c in trajs.criteria_json)
    steps = queries.steps_df(store, summary.run_id)
    calculator = steps[steps.tool_name == "calculate"]
    assert len(calculator) == 4 and "42" in calculator.observation.iloc[0]
    assert (steps.kind == "user").sum() >= 4  # every rollout's answer reached the simulated user, who replied


@pytest.fixture(scope="module")
def trained_on_rounds(tmp_path_factory):
    """One GRPO step under the round protocol, the tiny model sampling for itself (no script): the stored
    log-probabilities are its sampler's own, so a stored round can be replayed against them."""
    tmp = tmp_path_factory.mktemp("grpo-rounds")
    store = Store(tmp / "store.duckdb")
    summary = run_training(config(tmp, protocol="rounds", task_limit=2, examples_per_task=1, num_generations=2,
                                  per_device_train_batch_size=4, max_turns=2, turn_max_new_tokens=16, max_steps=1,
                                  lab_eval_limit=0, temperature=1.0), store, Console(quiet=True))
    return store, summary


def test_a_round_protocol_run_stores_each_rounds_tokens_as_its_sampler_gave_them(trained_on_rounds):
    store, summary = trained_on_rounds
    tokens = queries.token_trajectories_df(store, summary.run_id)
    steps = queries.steps_df(store, summary.run_id)
    rollout = ["task_id", "sample_idx"]
    # one record per round, keyed by the round's `steps.turn`
    assert (tokens.groupby(rollout).round_idx.apply(list).to_dict()
            == steps.groupby(rollout).turn.apply(lambda turns: sorted(set(turns))).to_dict())
    assert len(tokens) == queries.trajectories_df(store, [summary.run_id]).n_turns.sum() > 4
    skipped = set(steps[steps.kind == "format_error"][[*rollout, "turn"]].itertuples(index=False, name=None))
    assert tokens.valid.tolist() == [(r.task_id, r.sample_idx, r.round_idx) not in skipped for r in tokens.itertuples()]
    # the ids and log-probabilities the trainer held for its rows, unchanged
    sampled = {(r.trajectory.task_id, r.trajectory.sample_idx, played.turn): played.tokens
               for r in summary.trainer._results for played in r.rounds}
    assert len(sampled) == len(tokens)
    for row in tokens.itertuples():
        held = sampled[(row.task_id, row.sample_idx, row.round_idx)]
        assert (list(row.prompt_ids), list(row.completion_ids), list(row.mask), list(row.logprobs)) == (
            held.prompt_ids, held.completion_ids, held.mask, held.logprobs)


def test_a_stored_round_replays_to_its_stored_log_probabilities(trained_on_rounds):
    """Prompt ids + completion ids through the model that sampled them (the start model: step 1's rollouts come
    before its update), at temperature 1, give the stored log-probabilities on the tokens it sampled."""
    from transformers import AutoModelForCausalLM

    store, summary = trained_on_rounds
    model = AutoModelForCausalLM.from_pretrained(summary.start_model).eval()
    tokens = queries.token_trajectories_df(store, summary.run_id, train_step=1)
    assert len(tokens)
    for row in tokens.itertuples():
        prompt, completion = list(row.prompt_ids), list(row.completion_ids)
        with torch.no_grad():
            logits = model(torch.tensor([prompt + completion])).logits[0, len(prompt) - 1:-1]  # (completion, vocab)
        replayed = torch.log_softmax(logits.float(), dim=-1).gather(1, torch.tensor(completion)[:, None])[:, 0]
        sampled = torch.tensor(list(row.mask)) == 1
        assert sampled.any()
        stored = torch.tensor(list(row.logprobs))
        torch.testing.assert_close(replayed[sampled], stored[sampled].to(replayed.dtype), atol=1e-3, rtol=0)
        # the test can fail: the completion read one token late gives other numbers
        shifted = torch.log_softmax(logits.float(), dim=-1).gather(1, torch.tensor(completion).roll(1)[:, None])[:, 0]
        assert not torch.allclose(shifted[sampled], stored[sampled].to(replayed.dtype), atol=1e-3)


def test_the_released_trainers_round_behaviours_train(tmp_path):
    """One GRPO step with the fields the H100 config sets as the released trainer ran: every distinct valid
    tool of a round runs (two in one round here), documents are interleaved, 30 per search, experts asked
    as released, a KL term to the start model, and a round without a valid call dropped (no penalty)."""
    both = ('<tool_call>{"name": "search", "arguments": {"model": "search-1"}}</tool_call>'
            '<tool_call>{"name": "enhance_reasoning", "arguments": {"model": "reasoner-1"}}</tool_call>')
    answer = '<tool_call>{"name": "answer", "arguments": {"model": "answer-1"}}</tool_call>'
    scripts = {k: [both, answer] for k in range(4)}
    store = Store(tmp_path / "store.duckdb")
    settings = dict(protocol="rounds", expert_protocol="released", calls_per_round="distinct",
                    document_order="interleaved", document_chars=4000, document_suffix="", retrieval_top_k=30,
                    beta=1e-4, format_penalty=0.0, task_limit=2, examples_per_task=1, num_generations=2,
                    per_device_train_batch_size=4, max_turns=3, max_steps=1, lab_eval_limit=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(scripts))
        summary = run_training(config(tmp_path, **settings), store, Console(quiet=True))
    steps = queries.steps_df(store, summary.run_id)
    first = steps[(steps.turn == 0) & (steps.kind == "tool")]
    assert set(first.groupby(["task_id", "sample_idx"]).tool_name.apply(tuple)) == {("search", "enhance_reasoning")}
    metrics = queries.train_metrics_df(store, summary.run_id)
    assert len(metrics) == 1 and metrics.kl.notna().all()
    toolkit = json.loads(queries.runs_df(store).set_index("run_id").loc[summary.run_id].toolkit_json)
    (search,) = [t for t in toolkit["tools"] if t["name"] == "search"]
    assert search["backend"]["retriever"]["top_k"] == 30


def test_the_evidence_finds_the_run_that_made_the_model_by_its_fingerprint(trained, tmp_path):
    """`orchestra train evidence` reads which way training pushed from the run the trained folder names, so
    the pulls cover every scored group of that run, and a folder without a fingerprint has none."""
    _, store, summary = trained
    pulls = training_pulls(Path(summary.model_dir), store)
    scored = queries.trajectories_df(store, [summary.run_id]).dropna(subset=["advantage"])
    assert pulls.groups.sum() == scored.groupby(["train_step", "group_id"]).ngroups > 0
    assert training_pulls(tmp_path, store).empty


def test_paired_instructions_train_each_step_on_whole_tasks_under_both_instructions(tmp_path):
    """`paired_instructions`: every step's groups are tasks under each training instruction, every example of
    a task in the same step (what the sampler promises, read from the rollouts the run logged)."""
    store = Store(tmp_path / "store.duckdb")
    two = ["Get the answer right; money is no object.", "Be accurate but keep the bill as low as you can."]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OrchestraGRPOTrainer, "rollout_policy", scripted(SCRIPTS))
        summary = run_training(config(tmp_path, paired_instructions=True, training_instructions=two, max_steps=3,
                                      per_device_train_batch_size=8, save_steps=3, lab_eval_limit=1),
                               store, Console(quiet=True))
    rollouts = queries.trajectories_df(store, [summary.run_id])
    assert sorted(rollouts.train_step.unique()) == [1, 2, 3]
    for _, step in rollouts.groupby("train_step"):
        assert step.task_id.nunique() == 1   # 2 groups of 4: one task, both of its examples
        assert step.preference_json.nunique() == 2   # under both instructions
