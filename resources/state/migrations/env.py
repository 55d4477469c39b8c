"""Alembic environment: migrations run on the connection handed over by resources.state.migrate."""

from alembic import context

from resources.state.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER constraints in place; batch mode rebuilds the table.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
