"""DuckDB trajectory store: schema and migrations, short-lived writes, named read queries, Parquet.

Use `open_store(db)` (or `Store(path)`) to write, `lab.store.queries` to read, and
`lab.store.parquet` to move one run between store files.
"""

from lab.store.schema import SCHEMA_VERSION
from lab.store.store import DB_ENV_VAR, DEFAULT_DB, Store, StoreLockedError, open_store, resolve_db_path

__all__ = [
    "DB_ENV_VAR",
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "Store",
    "StoreLockedError",
    "open_store",
    "resolve_db_path",
]
