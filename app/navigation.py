"""The dashboard's pages by URL path: `main.py` runs them, pages link to each other through `page()`."""

from __future__ import annotations

import streamlit as st

#: url path -> title; the view is `app/views/<url path>.py`
PAGES = {"runs": "Runs", "playground": "Playground", "rollouts": "Rollouts", "steering": "Preference steering",
         "tools": "Tool use", "pareto": "Pareto", "compare": "Compare", "training": "Training"}


def page(url_path: str) -> st.Page:
    """The page at `url_path`: its view file (`app/views/<path>.py`, which renders itself when run as a
    page), the same page `main.py` navigates, so links and `AppTest.switch_page` find it."""
    return st.Page(f"views/{url_path}.py", title=PAGES[url_path], url_path=url_path, default=url_path == "runs")
