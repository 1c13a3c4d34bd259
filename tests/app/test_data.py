"""The app's reads (`app/data.py`): cached by the store file's mtime, so a run written while a page is
open shows on the page's next refresh."""

from __future__ import annotations

from lab.store import Store
from tests.helpers.dashboard import started


def test_a_run_written_while_the_page_is_open_appears_on_the_next_refresh(app_store, make_run):
    at = started()
    assert "eval-new" not in set(at.dataframe[0].value.run_id)
    store = Store(app_store)
    run, items = make_run("eval-new", {"t1": [1.0]})
    store.write_run(run)
    store.write_trajectories(items)
    at.run()  # what the page's 3 s refresh does; the cache is keyed on the file's mtime, not a timer
    assert "eval-new" in set(at.dataframe[0].value.run_id)


def test_a_run_a_shard_or_rank_spools_appears_on_the_next_refresh_and_after_compaction(app_store, make_run):
    """Ranks and shards write segments beside the file, not the file: the page sees them all the same."""
    at = started()
    spooled = Store(app_store, spool=True)
    run, items = make_run("eval-spooled", {"t1": [1.0]})
    spooled.write_run(run)
    spooled.write_trajectories(items)
    at.run()
    assert "eval-spooled" in set(at.dataframe[0].value.run_id)
    Store(app_store).compact()
    at.run()
    assert "eval-spooled" in set(at.dataframe[0].value.run_id)
