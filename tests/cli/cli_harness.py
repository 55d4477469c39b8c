"""Run the installed `catlas` script as a user would, and read back what it stored.

The command runs in a subprocess (its exit code and its stderr are what a shell sees); the
state it leaves is read directly from the SQLite file and the Parquet lake, never through
the code under test.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from resources.lake import Lake
from resources.storage import Storage

CATLAS = Path(sys.executable).with_name("catlas")
TIMEOUT_S = 120

# Wide enough that rich never truncates or wraps a table cell (the run ids are compared).
COLUMNS = "250"

# Each command is a fresh interpreter: let them share compiled bytecode in a private cache
# outside the repository, instead of compiling every imported module on every start.
PYCACHE = Path(tempfile.gettempdir()) / f"catlas-cli-tests-pycache-{os.getuid()}"


def iso(moment: datetime) -> str:
    """The CATLAS_NOW spelling of an instant."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return (
            f"catlas {' '.join(self.args)} -> exit {self.code}\n"
            f"--- stdout\n{self.out}--- stderr\n{self.err}"
        )

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


class Catlas:
    """The `catlas` console script in one working folder with a fixed set of CATLAS_* vars."""

    def __init__(self, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.cwd = cwd
        self.env = dict(env or {})

    def run(self, *args: str, **env: str) -> Result:
        """Run `catlas ARGS`; keyword arguments add or override environment variables."""
        full_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("CATLAS_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        full_env.update(COLUMNS=COLUMNS, PYTHONPYCACHEPREFIX=str(PYCACHE))
        full_env.update(self.env)
        full_env.update(env)
        completed = subprocess.run(
            [str(CATLAS), *args],
            cwd=self.cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        return Result(tuple(args), completed.returncode, completed.stdout, completed.stderr)

    def ok(self, *args: str, **env: str) -> Result:
        """Run a command that must succeed quietly (exit 0, nothing on stderr)."""
        result = self.run(*args, **env)
        assert result.code == 0, str(result)
        assert result.err == "", str(result)
        return result


def assert_no_traceback(result: Result) -> None:
    assert "Traceback" not in result.err, str(result)
    assert "Traceback" not in result.out, str(result)


def assert_one_error_line(result: Result, code: int, *mentions: str) -> str:
    """Exit `code`, no traceback, exactly one `catlas: error:` line naming every mention."""
    assert_no_traceback(result)
    assert result.code == code, str(result)
    assert len(result.err_lines) == 1, str(result)
    line = result.err_lines[0]
    assert line.startswith("catlas: error: "), str(result)
    for mention in mentions:
        assert mention in line, f"{mention!r} not named in {line!r}"
    return line


# -- rich tables ---------------------------------------------------------------------------
def table_rows(output: str) -> list[dict[str, str]]:
    """The rows of the one rich table in `output`, keyed by the header cells."""
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for line in output.splitlines():
        if line.startswith("┃") and header is None:
            header = [cell.strip() for cell in line.strip("┃").split("┃")]
        elif line.startswith("│"):
            assert header is not None, output
            cells = [cell.strip() for cell in line.strip("│").split("│")]
            rows.append(dict(zip(header, cells, strict=True)))
    return rows


# -- what is stored ------------------------------------------------------------------------
def state_db(state_dir: Path) -> Path:
    return state_dir / "state.db"


def db_rows(state_dir: Path, query: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(state_db(state_dir))
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def db_count(state_dir: Path, table: str) -> int:
    return int(db_rows(state_dir, f"SELECT count(*) FROM {table}")[0][0])


def lake_rows(state_dir: Path, table: str, columns: str = "*") -> list[dict[str, Any]]:
    """Rows of a lake table read straight from its visible Parquet files."""
    lake = Lake(Storage(str(state_dir / "lake")))
    files = (
        [lake.storage.uri(k) for k in lake.files(table)] if (state_dir / "lake").is_dir() else []
    )
    if not files:
        return []
    paths = ", ".join(f"'{path}'" for path in files)
    con = duckdb.connect(":memory:")
    try:
        relation = con.sql(f"SELECT {columns} FROM read_parquet([{paths}])")
        names = list(relation.columns)
        return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
    finally:
        con.close()


def lake_files(state_dir: Path) -> dict[str, int]:
    """Every file under the lake (path relative to it -> size)."""
    lake = state_dir / "lake"
    if not lake.is_dir():
        return {}
    return {
        str(path.relative_to(lake)): path.stat().st_size
        for path in sorted(lake.rglob("*"))
        if path.is_file()
    }


def stored_state(state_dir: Path) -> dict[str, Any]:
    """Everything a command could have stored: every table's rows, the lake, .last_run.json."""
    tables = [
        name
        for (name,) in db_rows(
            state_dir, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        )
    ]
    snapshot: dict[str, Any] = {
        f"table {name}": sorted(map(repr, db_rows(state_dir, f'SELECT * FROM "{name}"')))
        for name in tables
    }
    snapshot["lake"] = lake_files(state_dir)
    last_run = state_dir / ".last_run.json"
    snapshot[".last_run.json"] = json.loads(last_run.read_text()) if last_run.exists() else None
    return snapshot
