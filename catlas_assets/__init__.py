"""catlas: company web intelligence on Dagster, a Parquet lake and a state store.

`catlas_assets.connect()` opens the lake for a notebook: the same DuckDB connection as
`catlas sql` (every lake table, dimension and dbt_intel mart as a view; an S3 lake read
through a registered fsspec filesystem).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from catlas_assets.settings import Settings


def connect(settings: Settings | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection over the lake of `settings` (default: the `CATLAS_*` environment).

    >>> con = connect()
    >>> con.sql("select company_name, count(*) from changes join companies using (company_id) group by 1")
    """
    # Imported here: importing the package stays light (the CLI starts from it).
    from catlas_assets.services.runtime import Runtime
    from catlas_assets.services.sql import connect as open_lake
    from catlas_assets.settings import Settings

    runtime = Runtime(settings or Settings.from_env())
    try:
        return open_lake(runtime)
    finally:
        runtime.close()


__all__ = ["connect"]
