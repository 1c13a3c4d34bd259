"""The Orchestra Lab dashboard: `orchestra app [--db PATH]` runs `streamlit run app/main.py`.

Seven pages over one store (`app.views`, listed in `app.navigation`); every read goes through
`app.data` (short-lived read-only connections, cached by the file's mtime), every figure through
`lab.report.figures`, the same builders the CLI report and the notebooks use. The app never writes
to the store and imports neither torch nor the trainer, so it starts fast and cannot disturb a run
that is writing.
"""

from __future__ import annotations

import streamlit as st

from app.navigation import all_pages

st.set_page_config(page_title="Orchestra Lab", layout="wide")
st.navigation(all_pages()).run()
