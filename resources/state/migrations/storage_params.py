"""PostgreSQL storage parameters (fillfactor, autovacuum) set and reset by migrations."""

from alembic import op


def set_params(tables: dict[str, dict[str, str]]) -> None:
    """`ALTER TABLE ... SET (...)` for each table; nothing on SQLite (no such parameters)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, params in tables.items():
        settings = ", ".join(f"{key} = {value}" for key, value in params.items())
        op.execute(f"ALTER TABLE {table} SET ({settings})")


def reset_params(tables: dict[str, dict[str, str]]) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, params in tables.items():
        op.execute(f"ALTER TABLE {table} RESET ({', '.join(params)})")
