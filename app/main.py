"""The Orchestra Lab dashboard: `orchestra app [--db PATH]` runs `streamlit run app/main.py`.

Eight pages over one store (`app.views`, listed in `app.navigation`); every read goes through
`app.data` (short-lived read-only connections, cached by the file's mtime), every figure through
`lab.report.figures`, the same builders the CLI report and the notebooks use. Only the Playground
writes (the rollouts a user plays, as runs of kind `playground`, in one short transaction each) and
only it loads models; every other page imports neither torch nor the trainer, so the app starts fast
and cannot disturb a run that is writing.
"""

from __future__ import annotations

import streamlit as st

from app.navigation import all_pages

st.set_page_config(page_title="Orchestra Lab", layout="wide")
st.navigation(all_pages()).run()
