"""The `catlas` group, its context, output helpers, exit codes and error handling."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from catlas_assets.domain.masking import masked
from catlas_assets.domain.verdict import FailWhen, exit_code
from catlas_assets.errors import CatlasError, ConfigError, StorageError
from catlas_assets.settings import Settings

if TYPE_CHECKING:
    # The runtime pulls in the state store, the lake and the fetcher: imported by the
    # commands that use it, so `catlas --help` starts at once.
    from catlas_assets.services.runs import RunReport
    from catlas_assets.services.runtime import Runtime

console = Console()
errors = Console(stderr=True)

# Exit codes (README: "Exit codes").
EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3


class Context:
    def __init__(self) -> None:
        self._runtime: Runtime | None = None

    @property
    def settings(self) -> Settings:
        return Settings.from_env()

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            from catlas_assets.services.runtime import Runtime

            self._runtime = Runtime(self.settings)
        return self._runtime

    def close(self) -> None:
        if self._runtime is not None:
            self._runtime.close()


pass_context = click.make_pass_decorator(Context, ensure=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="catlas", prog_name="catlas", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """catlas: watch companies' public web surfaces and turn changes into facts."""
    ctx.obj = Context()
    ctx.call_on_close(ctx.obj.close)


# -- output helpers ------------------------------------------------------------------------
def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    table = Table(*columns, title=title, show_lines=False)
    for row in rows:
        # Text, not markup: a stored value such as "Evil [/bold] Inc" is printed as data.
        table.add_row(*(Text(_cell(v)) for v in row))
    # Piped into a file or another program, a table is never cut at 80 columns.
    target = console if console.is_terminal else Console(width=PIPED_WIDTH)
    target.print(table)


PIPED_WIDTH = 100_000


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return when(value)
    return str(value)


def emit(
    fmt: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    """One list: a table (`--format table`), CSV or a JSON array of objects."""
    from catlas_assets.cli import output

    if fmt == "csv":
        output.write_csv(columns, rows)
    elif fmt == "json":
        output.write_json(output.records(columns, rows))
    else:
        table(columns, rows, title=title)


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M}Z" if value else ""


def duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds // 60}m"


def finish(report: RunReport, *, fail_when: str = "any", others: Sequence[RunReport] = ()) -> None:
    """Print the verdict; exit 1 as `--fail-when` says over every run the command started."""
    style = {"success": "green", "partial": "yellow", "failed": "red"}[report.outcome.value]
    console.print(f"verdict: [{style}]{report.outcome.value}[/] - {escape(report.summary_line)}")
    outcomes = [r.outcome for r in (*others, report)]
    if exit_code(outcomes, FailWhen(fail_when)):
        raise SystemExit(EXIT_RUN_FAILED)


def print_error(message: object) -> None:
    """One line on stderr, whatever the message holds and however narrow the terminal."""
    text = " ".join(line.strip() for line in masked(str(message)).splitlines() if line.strip())
    errors.print(f"catlas: error: {text}", markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _errors_as_messages() -> Iterator[None]:
    try:
        yield
    except (ConfigError, StorageError) as exc:
        print_error(exc)
        raise SystemExit(EXIT_ENVIRONMENT) from None
    except CatlasError as exc:
        print_error(exc)
        raise SystemExit(EXIT_BAD_INPUT) from None
    except Exception as exc:
        # A state database that went away mid-command (a restart, a cut connection): one
        # line and exit 3, as for a lake that cannot be written. Imported here: when it
        # raised, SQLAlchemy is loaded already.
        from sqlalchemy.exc import OperationalError

        if not isinstance(exc, OperationalError):
            raise
        print_error(f"the state database stopped answering: {exc.orig or exc}")
        raise SystemExit(EXIT_ENVIRONMENT) from None


def main(argv: Sequence[str] | None = None) -> None:
    with _errors_as_messages():
        try:
            code = cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="catlas",
                standalone_mode=False,
            )
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            raise SystemExit(EXIT_BAD_INPUT) from None
        except click.ClickException as exc:
            # Usage errors read like every other error: one line, exit code 2.
            where = getattr(exc, "ctx", None)
            hint = f" (see '{where.command_path} --help')" if where is not None else ""
            print_error(exc.format_message() + hint)
            raise SystemExit(EXIT_BAD_INPUT) from None
        except click.Abort:
            click.echo("Aborted!", err=True)
            raise SystemExit(1) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


# Discovery and onboarding commands live in their own module (registered last: it imports
