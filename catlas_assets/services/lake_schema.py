"""The declared columns of each lake table, as the Dagster UI shows them."""

from __future__ import annotations

from resources.lake_tables import TABLES


def columns(table: str) -> list[tuple[str, str]]:
    """(name, Arrow type) of each column of a lake table, in order."""
    return [(field.name, str(field.type)) for field in TABLES[table].schema]
