"""Commands over the lake: SQL (one-shot, several statements, stdin, a shell) and compaction."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from catlas_assets.cli.app import Context, cli, console, emit, pass_context, print_error
from catlas_assets.cli.output import format_option, write_json
from catlas_assets.errors import CatlasError

if TYPE_CHECKING:
    import duckdb

    from catlas_assets.services import sql


def _sql():  # type: ignore[no-untyped-def]
    """The SQL service, imported by the commands that use it (it loads DuckDB)."""
    from catlas_assets.services import sql

    return sql


SHELL_HELP = (
    "statements end with ';' · .tables · .schema TABLE · .format table|csv|json · .help · .quit"
)


# -- the lake ------------------------------------------------------------------------------
@cli.command("sql")
@click.argument("query", required=False)
@format_option()
@pass_context
def sql_cmd(obj: Context, query: str | None, fmt: str) -> None:
    """Run SQL on the lake: every table, dimension and dbt mart is a view.

    QUERY may hold several statements (each result is printed); `-` reads it from stdin;
    without QUERY an interactive shell opens (history, .tables, .schema T).
    """
    con = _sql().connect(obj.runtime)
    try:
        if query is None:
            _shell(con, fmt, obj.settings.state_path / "sql_history")
            return
        text = sys.stdin.read() if query == "-" else query
        _print_results(_sql().run(con, text), fmt)
    finally:
        con.close()


def _print_results(results: Sequence[sql.QueryResult], fmt: str) -> None:
    shown = [r for r in results if r.columns]
    if fmt == "json":
        documents = [r.records() for r in shown]
        # One statement: its rows; several: one array of rows per statement.
        write_json(documents[0] if len(documents) == 1 else documents)
        return
    for index, result in enumerate(shown):
        if index and fmt == "csv":
            click.echo("")
        emit(fmt, result.columns, result.rows)


def _shell(con: duckdb.DuckDBPyConnection, fmt: str, history: object) -> None:
    readline = _readline(str(history))
    interactive = sys.stdin.isatty()
    if interactive:
        console.print(f"catlas sql · {SHELL_HELP}", highlight=False)
    buffer: list[str] = []
    while True:
        try:
            line = input("... " if buffer else "catlas> ") if interactive else _next_line()
        except EOFError:
            break
        if not buffer and line.strip().startswith("."):
            command, _, argument = line.strip().partition(" ")
            if command in (".quit", ".exit"):
                break
            fmt = _dot_command(con, command, argument.strip(), fmt)
            continue
        buffer.append(line)
        if line.rstrip().endswith(";"):
            _shell_statement(con, "\n".join(buffer), fmt)
            buffer = []
    if buffer and "".join(buffer).strip():
        _shell_statement(con, "\n".join(buffer), fmt)
    if readline is not None:
        # No state folder to keep it in: the session still worked.
        with contextlib.suppress(OSError):
            readline.write_history_file(str(history))


def _next_line() -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


def _shell_statement(con: duckdb.DuckDBPyConnection, text: str, fmt: str) -> None:
    try:
        _print_results(_sql().run(con, text), fmt)
    except CatlasError as exc:  # a bad statement is reported; the shell goes on
        print_error(exc)


def _dot_command(con: duckdb.DuckDBPyConnection, command: str, argument: str, fmt: str) -> str:
    try:
        if command == ".tables":
            emit(fmt, ["name"], [(name,) for name in _sql().tables(con)])
        elif command == ".schema" and argument:
            emit(fmt, ["column", "type"], _sql().schema(con, argument))
        elif command == ".format" and argument in ("table", "csv", "json"):
            return argument
        else:
            console.print(SHELL_HELP, highlight=False)
    except CatlasError as exc:
        print_error(exc)
    return fmt


def _readline(history: str):  # type: ignore[no-untyped-def]
    """The line editor with the shell's history file, where the platform has one."""
    try:
        import readline
    except ImportError:
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(1000)
    return readline


@cli.command("compact")
@pass_context
def compact(obj: Context) -> None:
    """Flush pending lake rows, compact every hour partition, update latest_observations,
    snapshot the dimensions."""
    from catlas_assets.services.compaction import compact_all

    console.print(compact_all(obj.runtime).summary())
