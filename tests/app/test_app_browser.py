"""The dashboard in a real browser: `orchestra app` in its own process, driven by headless Chromium.

What a user would notice: every page opens without an error; moving a preference slider re-ranks the
systems; clicking a point of the Pareto chart leads to that run's trajectories; a deep link opens the
run, task and vector it names; and the app keeps serving while an evaluation writes the store.
Screenshots land in `artifacts/screenshots/` (kept by CI as test artifacts).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.navigation import PAGES
from lab.store import Store, queries
from tests.helpers.dashboard import Served, build_store

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium")]

SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
TIMEOUT_MS = 60_000


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        yield chromium
        chromium.close()


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.locator("h1").first.wait_for()
    return page


def no_error(page) -> None:
    for selector in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]'):
        shown = page.locator(selector)
        assert shown.count() == 0, shown.first.inner_text()


def settle(page) -> None:
    """Wait until the page's script has finished: no running indicator, no placeholder skeleton."""
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
    page.locator('[data-testid="stSkeleton"]').first.wait_for(state="detached")


def shot(page, name: str) -> None:
    settle(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_every_page_opens(served, browser):
    for path, title in PAGES.items():
        page = open_page(browser, f"{served.url}/{path}")
        page.get_by_role("heading", name=title).first.wait_for()
        settle(page)
        no_error(page)
        shot(page, path)
        page.close()


def test_a_slider_reranks_and_the_url_keeps_it(served, browser):
    page = open_page(browser, f"{served.url}/steering?runs=eval-a,eval-b&p=outcome%3D1")
    ranking = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="Ranking:").first
    ranking.wait_for()
    assert ranking.inner_text().split()[1] == "eval-b"
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text="gpt-5").get_by_role("slider")
    thumb.focus()
    for _ in range(20):  # step 0.05 from 0 to 1
        thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"p=gpt-5%3D1(%2C|&|$)"))  # the slider's state is in the URL
    page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=re.compile(r"Ranking:\s*eval-a")).first.wait_for()
    shot(page, "steering-after-slider")
    no_error(page)


def test_a_preset_moves_every_slider_to_its_values(served, browser):
    from playwright.sync_api import expect

    page = open_page(browser, f"{served.url}/steering?runs=eval-a,eval-b&p=gpt-5%3D1")
    preset = "Keep it cheap and quick; I can live with some mistakes."
    page.get_by_role("combobox", name=re.compile("^Preset")).click()
    page.get_by_role("option", name=preset).click()
    page.wait_for_url(re.compile(r"p=outcome%3D0.6%2Ccompute%3D1%2Clatency%3D1(&|$)"))
    settle(page)
    for name, value in {"gpt-5": "0.00", "qwen3-32b": "0.00", "local_search": "0.00", "outcome": "0.60",
                        "compute": "1.00", "latency": "1.00"}.items():
        slider = page.locator('[data-testid="stSlider"]').filter(has_text=re.compile(f"^{re.escape(name)}"))
        # the URL changes with the script's run; the slider redraws when its message arrives: wait for it
        expect(slider.get_by_test_id("stSliderThumbValue")).to_have_text(value, timeout=TIMEOUT_MS)
    shot(page, "steering-preset")
    no_error(page)


def test_runs_opens_at_its_own_path_without_a_popup(served, browser):
    page = open_page(browser, f"{served.url}/runs")
    page.get_by_role("heading", name="Runs").first.wait_for()
    settle(page)
    assert page.get_by_text("Page not found").count() == 0
    no_error(page)


def test_the_playground_plays_the_demos_trained_model_under_two_instructions(quick_demo, tmp_path, browser):
    """The demo's own store and folder: the trained model, the first task, the two training instructions."""
    db = tmp_path / "demo.duckdb"
    shutil.copy(quick_demo.db, db)
    server = Served(db, cwd=quick_demo.cwd, env={"ORCHESTRA_CACHE": str(quick_demo.cache)})
    server.wait_ready()
    try:
        page = open_page(browser, f"{server.url}/playground")
        assert page.get_by_role("combobox", name="Orchestrator").input_value().startswith("trained · hf:")
        page.get_by_role("button", name="Run").click()
        page.get_by_text(re.compile("^B vs A:")).first.wait_for()
        settle(page)
        for header in ("A: Get the answer right; money is no object.",
                       "B: Be accurate but keep the bill as low as you can."):
            page.get_by_role("heading", name=header).first.wait_for()
        no_error(page)
        shot(page, "playground")
        played = queries.runs_summary_df(Store(db, read_only=True))
        played = played[played.kind == "playground"]
        assert len(played) == 2 and set(played.orchestrator) == {"hf:runs/cpu-tiny-quick"}
        shown = page.locator("body").inner_text()
        for trajectory in queries.trajectories_df(Store(db, read_only=True), list(played.run_id)).itertuples():
            assert f"{100 * trajectory.cost_usd:.3f}¢ · {trajectory.latency_s:.1f} s" in shown  # its stored cost
    finally:
        server.stop()


def test_a_pareto_click_opens_the_runs_trajectories(served, browser):
    page = open_page(browser, f"{served.url}/pareto?runs=eval-a,eval-b")
    point = page.locator(".js-plotly-plot .scatterlayer .trace .points path").first
    point.wait_for()
    point.click(force=True)
    link = page.get_by_role("link", name=re.compile("Open the trajectories of"))
    link.wait_for()
    run_id = link.inner_text().split()[-1]
    link.click()
    page.wait_for_url(re.compile(r"/rollouts"))
    page.get_by_text("verdict", exact=False).first.wait_for()
    assert f"run={run_id}" in page.url
    shot(page, "pareto-click-rollouts")
    no_error(page)


def test_a_deep_link_opens_its_trajectory(served, browser):
    page = open_page(browser, f"{served.url}/rollouts?run=eval-b&task=t2")
    page.get_by_text("verdict", exact=False).first.wait_for()
    assert page.get_by_role("combobox", name="Run").input_value().startswith("eval-b · eval")
    assert " t2 · Question 2?" in page.get_by_role("combobox", name=re.compile("^Task")).input_value()
    no_error(page)


def test_the_app_keeps_serving_while_a_run_writes(tmp_path, browser, world):
    """The app re-reads the store every second while `orchestra eval` writes it; the run loses nothing."""
    db = tmp_path / "live.duckdb"
    Store(db)
    server = Served(db)
    server.wait_ready()
    try:
        writer = subprocess.Popen([sys.executable, "-c", "from orchestra.cli import main; main()",
                                   "eval", "--benchmark", "world:frames", "--limit", "12", "--samples", "2",
                                   "--temperature", "0.7", "--orchestrator", "scripted:random", "--db", str(db)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        page = open_page(browser, f"{server.url}/runs")
        reloads = 0
        while writer.poll() is None:
            page.reload()
            page.locator("h1").first.wait_for()
            no_error(page)
            reloads += 1
            page.wait_for_timeout(1000)  # the user's refresh rate, not a synchronisation
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        page.reload()
        page.get_by_text("No runs in").or_(page.locator('[data-testid="stDataFrame"]')).first.wait_for()
        no_error(page)
    finally:
        server.stop()
    (run,) = queries.runs_summary_df(Store(db)).itertuples()
    assert run.status == "finished" and run.trajectories == 24 and reloads >= 1


def test_stopping_the_app_stops_its_server(tmp_path, make_run):
    """`orchestra app` is the server process itself (exec), so a SIGTERM to it leaves nothing listening."""
    import urllib.request

    server = Served(build_store(tmp_path / "s.duckdb", make_run))
    server.wait_ready()
    server.stop()
    assert server.process.returncode is not None
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=5)
