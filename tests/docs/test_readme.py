"""The README stays true: its settings table is the one the code generates, and every
CLI command it lists exists."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from catlas_assets.cli import cli
from catlas_assets.settings import settings_markdown

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_settings_table_matches_the_settings_object() -> None:
    text = README.read_text()
    block = text.split("<!-- settings:start -->")[1].split("<!-- settings:end -->")[0]
    assert block.strip() == settings_markdown(), (
        "README settings table is stale: replace it with `catlas settings --markdown`"
    )


def test_every_command_in_the_readme_has_help() -> None:
    rows = re.findall(r"^\| `catlas ([a-z-]+)(?: ([a-z][a-z-]*))?", README.read_text(), re.M)
    commands = {tuple(word for word in row if word) for row in rows}
    assert {("demo",), ("sql",), ("run-sensor",), ("schedule",), ("companies", "add")} <= commands
    runner = CliRunner()
    for words in commands:
        result = runner.invoke(cli, [*words, "--help"])
        assert result.exit_code == 0, (words, result.output)
