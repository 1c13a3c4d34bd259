"""Tests for lab.report.api.

`load_report` over a real store: the tables a user gets for logged runs.
"""

from __future__ import annotations

import json

import pytest

from lab.errors import LabInputError
from lab.pricing import PriceTable
from lab.records import RunRecord
from lab.report.api import load_report, run_info_frame

TASKS = [f"t{i}" for i in range(12)]


@pytest.fixture
def two_runs(store_of, make_run):
    """strong: gpt-5 on 12 tasks, all solved; cheap: qwen3-32b on the first 10, half solved."""
    strong = make_run("strong", {t: [1.0] for t in TASKS}, tool="gpt-5", orchestrator="scripted:always-strongest")
    cheap = make_run("cheap", {t: [float(i % 2)] for i, t in enumerate(TASKS[:10])}, tool="qwen3-32b",
                     orchestrator="scripted:qwen3-8b-prompted")
    return store_of(strong, cheap)


def test_report_tables_hold_hand_computed_numbers(two_runs):
    report = load_report(two_runs, ["strong", "cheap"], n_resamples=500)
    acc = report.accuracy.set_index("run_id")
    assert acc.loc["strong", "accuracy"] == 1.0 and acc.loc["cheap", "accuracy"] == 0.5
    (pair,) = report.paired.itertuples()
    assert (pair.run_a, pair.run_b, pair.n_shared) == ("strong", "cheap", 10)   # t10, t11 are not shared
    assert pair.diff == pytest.approx(0.5) and pair.a_only == 5 and pair.b_only == 0
    bias = report.bias.set_index("run_id")
    assert bias.loc["strong", "strongest"] == "gpt-5" and bias.loc["strong", "strongest_share"] == 1.0
    assert bias.loc["cheap", "strongest_share"] == 0.0
    assert bias.loc["cheap", "orchestrator_family"] == "qwen" and bias.loc["cheap", "own_family_share"] == 1.0
    assert report.router.set_index("run_id").pgr.to_dict() == {"strong": 1.0, "cheap": 0.0}
    assert report.pareto.on_frontier.all()                        # cheaper and worse vs dearer and better
    shares = report.tool_calls.groupby("run_id").share.sum()
    assert shares.to_dict() == pytest.approx({"strong": 1.0, "cheap": 1.0})
    assert report.settings["preference_source"] == "logged"
    assert report.settings["preference"] == {"outcome": 1.0, "compute": 1.0}
    assert (report.preference.n_tasks == 10).all()
    assert report.reprice.empty and report.turn_budgets.empty


def test_reprice_under_deepinfra_changes_only_open_models(two_runs):
    report = load_report(two_runs, ["strong", "cheap"], pricing="deepinfra", n_resamples=10)
    rows = report.reprice.set_index("run_id")
    qwen = PriceTable.load("deepinfra").price("qwen3-32b")
    assert rows.loc["cheap", "repriced_cents_per_task"] == pytest.approx(100 * (1000 * 0.10 + 400 * 0.28) / 1e6)
    assert qwen.provider == "deepinfra"
    # gpt-5 is priced by OpenAI under every pricing, so the strong run's cost is unchanged.
    assert rows.loc["strong", "repriced_total_usd"] == pytest.approx(rows.loc["strong", "logged_total_usd"])
    assert rows.loc["strong", "change_pct"] == pytest.approx(0.0, abs=1e-9)


def test_unknown_runs_and_bad_preferences_are_input_errors(two_runs):
    with pytest.raises(LabInputError, match="unknown run id 'nope'"):
        load_report(two_runs, ["strong", "nope"])
    with pytest.raises(LabInputError, match="unknown run id 'ghost'"):
        load_report(two_runs, ["strong"], weak="ghost")
    with pytest.raises(LabInputError, match="unknown entry 'gpt-9'"):
        load_report(two_runs, ["strong"], preference="outcome=1,gpt-9=1")


def test_single_run_report_has_no_pairs_and_serialises(two_runs):
    report = load_report(two_runs, ["cheap", "cheap"], preference="outcome=1", n_resamples=10)
    assert report.run_ids == ["cheap"] and report.paired.empty
    payload = json.loads(json.dumps(report.to_dict()))
    assert payload["accuracy"][0]["accuracy"] == 0.5 and payload["settings"]["preference_source"] == "given"
    assert set(report.frames()) <= set(payload)


def test_turn_budget_variants_written_by_the_harness_form_one_curve(store_of, make_run):
    base = {"benchmark": "world", "orchestrator": "scripted:x", "seed": 0, "max_turns": [5, 10, 20], "concurrency": 16}
    runs = [make_run(f"turns-{k}", {t: [float(i < k)] for i, t in enumerate(TASKS)},
                     config={**base, "variant": {"preference": None, "max_turns": k}}) for k in (20, 5, 10)]
    other = make_run("other-seed", {"t0": [1.0]}, config={**base, "seed": 1, "max_turns": [10], "concurrency": 4})
    store = store_of(*runs, other)
    report = load_report(store, ["turns-20", "turns-5", "turns-10", "other-seed"], n_resamples=10)
    curve = report.turn_budgets
    assert list(curve.max_turns) == [5, 10, 20] and curve.curve.nunique() == 1
    assert list(curve.accuracy) == pytest.approx([5 / 12, 10 / 12, 1.0])
    assert "other-seed" not in set(curve.run_id)


def test_run_info_reads_a_single_budget_from_configs_without_variant():
    record = RunRecord(run_id="old", kind="eval", config_json=json.dumps({"max_turns": [30]}), orchestrator="o")
    many = RunRecord(run_id="many", kind="eval", config_json=json.dumps({"max_turns": [30, 40]}), orchestrator="o")
    info = run_info_frame([record, many]).set_index("run_id")
    assert info.loc["old", "max_turns"] == 30 and info.loc["many", "max_turns"] != info.loc["many", "max_turns"]  # NaN


def test_run_labels_drop_the_shared_prefix_and_hash_only_when_still_distinct():
    from lab.report.tables import run_labels

    ids = ["demo-cheapest-first-0123456789", "demo-oracle-abcdef0123"]
    assert run_labels(ids) == {ids[0]: "cheapest-first", ids[1]: "oracle"}
    same = ["world-openai-0123456789", "world-openai-abcdef0123"]
    assert run_labels(same) == {r: r for r in same}
