"""The CLI starts at once: importing it (what `catlas --help` does) loads none of the heavy
libraries, and the commands that need no state store or lake do not load them either.

Behaviour, not timing: a fresh interpreter imports the CLI (or runs a command) and reports
which modules ended up in `sys.modules`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Loaded by the commands that use them (the state store, the lake, the Dagster definitions).
HEAVY = ("dagster", "alembic", "pyarrow", "duckdb", "dbt", "sqlalchemy", "pandas", "polars")


def _loaded_after(code: str) -> set[str]:
    probe = textwrap.dedent(
        f"""
        import json, sys
        {code}
        print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_library() -> None:
    loaded = _loaded_after("import catlas_assets.cli")
    assert "click" in loaded  # the probe did import the CLI
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_help_loads_no_heavy_library() -> None:
    loaded = _loaded_after(
        textwrap.dedent(
            """
            from catlas_assets.cli import main
            try:
                main(["--help"])
            except SystemExit:
                pass
            """
        ).replace("\n", "\n        ")
    )
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_robots_check_needs_no_state_store_or_lake_library() -> None:
    # A refused URL fails before any request: the command's imports are what is measured.
    loaded = _loaded_after(
        textwrap.dedent(
            """
            from catlas_assets.cli import main
            try:
                main(["robots", "check", "not a url"])
            except SystemExit:
                pass
            import catlas_assets.services.robots_check
            import resources.fetcher
            """
        ).replace("\n", "\n        ")
    )
    assert "catlas_assets" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
