"""Screenshot one dashboard page on a store, for the README: `orchestra app` in its own process, headless Chromium.

    python scripts/dashboard_screenshot.py --db orchestra.duckdb --page pareto --out docs/images/dashboard.png \
        --runs cascade strongest qwen3-8b-prompted gpt-5-prompted oracle smollm2 warm-start trained
    python scripts/dashboard_screenshot.py --db orchestra.duckdb --page steering --out docs/images/steering.png
    python scripts/dashboard_screenshot.py --db orchestra.duckdb --page training --out docs/images/training.png
    python scripts/dashboard_screenshot.py --db orchestra.duckdb --page playground --out docs/images/playground.png \
        --height 2300 --query task=hle-0206

The Playground is shot after pressing Run on its first view (the demo's trained model, the first task, the
two training instructions side by side); it stores that play in the store, as a user's press would.
Run from the folder the demo ran in (its store names the trained model by a relative path). Needs the dev
install (Playwright) and Debian's chromium; the demo's store gives the README's pictures.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, type=Path)
    parser.add_argument("--page", default="pareto",
                        help="Page path (app/views/<page>.py), e.g. runs, pareto, steering.")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--height", type=int, default=1150, help="Window height in pixels (Streamlit scrolls its "
                                                                  "main area inside the window: a taller window "
                                                                  "shows more of a long page).")
    parser.add_argument("--query", nargs="*", default=[], help="More URL parameters, e.g. task=hle-0206.")
    parser.add_argument("--runs", nargs="*", default=[],
                        help="Runs (ids or names) the page shows; default: its own pick.")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from lab.store import Store, queries
    from orchestra.cli.dashboard import free_port, wait_healthy

    store = Store(args.db, read_only=True)
    params = ([f"runs={','.join(queries.resolve_run_id(store, r) for r in args.runs)}"] if args.runs else [])
    query = "?" + "&".join([*params, *args.query]) if params or args.query else ""

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-c", "from orchestra.cli import main; main()", "app", "--db",
                               str(args.db), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(url, server)  # raises if the app exits or never comes up
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": args.height})
            page.set_default_timeout(120_000)
            page.goto(f"{url}/{args.page}{query}")
            page.locator("h1").first.wait_for()
            page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
            if args.page == "playground":
                page.get_by_role("button", name="Run").click()
                page.get_by_text(re.compile("^B vs A:")).first.wait_for()
                page.get_by_text(re.compile("^(solved|not solved) · answer")).nth(1).wait_for()  # both verdicts
            else:
                page.locator(".js-plotly-plot").first.wait_for()
            page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=False)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
