"""Alembic environment: migrations run on the connection handed over by resources.state.migrate."""

from alembic import context

from resources.state.schema import UtcDateTime, metadata


def _render_item(type_: str, obj: object, autogen_context: object) -> str | bool:
    # The UTC wrapper is a runtime concern; the column it stores is a plain timestamp.
    if type_ == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER constraints in place; batch mode rebuilds the table.
    render_as_batch=connection.dialect.name == "sqlite",
    render_item=_render_item,
)
with context.begin_transaction():
    context.run_migrations()
