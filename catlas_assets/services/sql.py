"""SQL over the lake: the one way analysts open DuckDB on catlas's tables.

`connect` gives a DuckDB connection with every lake table and dimension as a view (S3
registered as an fsspec filesystem when the lake is on S3) and, once `dbt build` has made
them, the dbt_intel marts; `run` executes one or several statements on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catlas_assets.errors import CatlasError
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

if TYPE_CHECKING:
    import duckdb

DBT_CATALOG = "dbt_intel"


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    types: list[str] | None = None  # DuckDB type names, e.g. JSON, TIMESTAMP WITH TIME ZONE
    statement: str = ""

    def records(self) -> list[dict[str, Any]]:
        """Rows as mappings; JSON columns decoded (a document, not an escaped string)."""
        types = self.types or ["" for _ in self.columns]
        out = []
        for row in self.rows:
            item = {}
            for name, kind, value in zip(self.columns, types, row, strict=True):
                if kind == "JSON" and isinstance(value, str):
                    value = json.loads(value)
                item[name] = value
            out.append(item)
        return out


def connect(runtime: Runtime) -> duckdb.DuckDBPyConnection:
    con = runtime.lake.connect()
    attach_marts(con, runtime.settings)
    return con


def attach_marts(con: duckdb.DuckDBPyConnection, settings: Settings) -> list[str]:
    """Views over the dbt_intel tables (the marts), when their DuckDB file exists."""
    import duckdb

    path = settings.resolved_dbt_duckdb_path
    if not path.is_file():
        return []
    try:
        con.execute(f"ATTACH '{_quote(str(path))}' AS {DBT_CATALOG} (READ_ONLY)")
    except duckdb.Error:
        return []  # being built right now (dbt holds the file): the lake views still answer
    present = {
        row[0]
        for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'memory'"
        ).fetchall()
    }
    present |= {
        row[0]
        for row in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = 'memory'"
        ).fetchall()
    }
    # Tables only: the dbt staging views hold lake paths of the build; the marts are data.
    marts = [
        row[0]
        for row in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY 1",
            [DBT_CATALOG],
        ).fetchall()
        if row[0] not in present
    ]
    for name in marts:
        con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM {DBT_CATALOG}.main."{name}"')
    return marts


def _quote(text: str) -> str:
    return text.replace("'", "''")


def run(con: duckdb.DuckDBPyConnection, sql: str) -> list[QueryResult]:
    """Every statement of `sql` in order, each with its result (empty for DDL)."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise CatlasError(f"SQL error: {str(exc).splitlines()[0]}") from None
    results = []
    for statement in statements:
        text = statement.query.strip()
        try:
            relation = con.sql(text)
            if relation is None:
                results.append(QueryResult([], [], [], text))
                continue
            types = [str(t) for t in relation.types]
            results.append(QueryResult(list(relation.columns), relation.fetchall(), types, text))
        except duckdb.Error as exc:
            raise CatlasError(f"SQL error: {str(exc).splitlines()[0]}") from None
    return results


def query(runtime: Runtime, sql: str) -> QueryResult:
    """The last statement's result (one-statement callers)."""
    con = connect(runtime)
    try:
        results = run(con, sql)
        return results[-1] if results else QueryResult([], [])
    finally:
        con.close()


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        row[0]
        for row in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = 'memory' ORDER BY 1"
        ).fetchall()
    ]


def schema(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[str, str]]:
    import duckdb

    try:
        return [(r[0], r[1]) for r in con.execute(f'DESCRIBE "{name}"').fetchall()]
    except duckdb.Error as exc:
        raise CatlasError(f"SQL error: {str(exc).splitlines()[0]}") from None
