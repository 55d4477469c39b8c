"""Ad-hoc SQL over the lake: the one way analysts open DuckDB on catlas's tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from catlas_assets.errors import CatlasError
from catlas_assets.services.runtime import Runtime


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]


def query(runtime: Runtime, sql: str) -> QueryResult:
    con = runtime.lake.connect()
    try:
        relation = con.sql(sql)
        if relation is None:
            return QueryResult([], [])
        return QueryResult(list(relation.columns), relation.fetchall())
    except duckdb.Error as exc:
        raise CatlasError(f"SQL error: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
