"""The dashboard's pages by URL path: `main.py` runs them, pages link to each other through `page()`."""

from __future__ import annotations

import streamlit as st

#: url path -> title; the view is `app/views/<url path>.py`
PAGES = {"runs": "Runs", "playground": "Playground", "rollouts": "Rollouts", "steering": "Preference steering",
         "tools": "Tool use", "pareto": "Pareto", "compare": "Compare", "training": "Training"}
#: The page the app opens on, served at `/`.
HOME = "runs"


def page(url_path: str) -> st.Page:
    """The page at `url_path`: its view file (`app/views/<path>.py`, which renders itself when run as a
    page), the same page `main.py` navigates, so links and `AppTest.switch_page` find it. The home page is
    served at `/`; its own path (`/runs`) is `home_at_its_path()`."""
    return st.Page(f"views/{url_path}.py", title=PAGES[url_path], url_path=f"{url_path}-home" if url_path == HOME
                   else url_path, default=url_path == HOME)


def home_at_its_path() -> st.Page:
    """The home page's view once more at its own path (hidden from the menu): Streamlit serves a default
    page at `/` only, and a link or bookmark to `/runs` would otherwise open a "Page not found" popup."""
    return st.Page(f"views/{HOME}.py", title=PAGES[HOME], url_path=HOME, visibility="hidden")


def all_pages() -> list[st.Page]:
    """What `main.py` navigates: every page, and the home page once more at its own path (hidden)."""
    return [*(page(path) for path in PAGES), home_at_its_path()]
