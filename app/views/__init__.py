"""One module per dashboard page (not `pages/`: Streamlit would take that folder for its own page list),
each with a `render()`; shared widgets are in `app.widgets`."""
