"""`catlas sql`, the list commands' formats, `changes show` and `feed` on the demo lake."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner, Result

from catlas_assets.cli import cli

LIST_COMMANDS = [
    ["sensors"],
    ["changes"],
    ["report"],
    ["runs"],
    ["review", "list", "--status", "all"],
    ["companies", "list"],
    ["connectors"],
]

# The first test to run also lives through the session's demo (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def run(state: Path, *args: str, stdin: str | None = None) -> Result:
    result = CliRunner().invoke(
        cli, list(args), input=stdin, env={"CATLAS_STATE_DIR": str(state), "COLUMNS": "80"}
    )
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_version(demo_state: Path) -> None:
    assert run(demo_state, "--version").output.startswith("catlas 0.1")


@pytest.mark.parametrize("command", LIST_COMMANDS, ids=lambda c: " ".join(c))
def test_every_list_command_speaks_json_and_csv(demo_state: Path, command: list[str]) -> None:
    rows = json.loads(run(demo_state, *command, "--format", "json").output)
    assert isinstance(rows, list)
    table = list(csv.reader(io.StringIO(run(demo_state, *command, "--format", "csv").output)))
    assert len(table) == len(rows) + 1
    if rows:
        assert list(rows[0]) == table[0]


def test_piped_tables_are_not_cut_at_80_columns(demo_state: Path) -> None:
    output = run(demo_state, "sensors").output
    urls = {r["url"] for r in json.loads(run(demo_state, "sensors", "--format", "json").output)}
    assert all(url in output for url in urls)
    assert max(len(line) for line in output.splitlines()) > 80


def test_sql_prints_each_statement_and_reads_stdin(demo_state: Path) -> None:
    output = run(demo_state, "sql", "select 41 + 1 as answer; select 'two' as second").output
    assert "answer" in output and "42" in output and "second" in output and "two" in output
    piped = run(
        demo_state, "sql", "-", "--format", "json", stdin="select count(*) as n from changes;"
    ).output
    assert json.loads(piped)[0]["n"] > 0
    both = json.loads(
        run(demo_state, "sql", "select 1 as a; select 2 as b", "--format", "json").output
    )
    assert both == [[{"a": 1}], [{"b": 2}]]


def test_json_columns_come_out_as_json(demo_state: Path) -> None:
    rows = json.loads(
        run(
            demo_state,
            "sql",
            "select change_id, structured_delta, detected_at from changes where kind = 'major'",
            "--format",
            "json",
        ).output
    )
    assert rows and all(isinstance(r["structured_delta"], dict) for r in rows)
    assert all("reasons" in r["structured_delta"] for r in rows)
    assert rows[0]["detected_at"].endswith("Z")


def test_the_shell_lists_tables_and_describes_one(demo_state: Path) -> None:
    output = run(
        demo_state,
        "sql",
        stdin=".tables\nselect count(*) as sensor_rows\n  from sensors;\n.schema companies\n.quit\n",
    ).output
    for name in ("companies", "change_deliveries", "entity_events", "sensors_history"):
        assert name in output
    assert "sensor_rows" in output and "company_name" in output


def test_changes_show_prints_delta_and_unified_diff_and_writes_html(
    demo_state: Path, tmp_path: Path
) -> None:
    rows = json.loads(
        run(
            demo_state,
            "sql",
            "select change_id from changes where surface = 'pricing' and kind = 'major' "
            "order by detected_at limit 1",
            "--format",
            "json",
        ).output
    )
    change_id = rows[0]["change_id"]
    page = tmp_path / "diff.html"
    output = run(demo_state, "changes", "show", change_id, "--html", str(page)).output
    assert "Northwind Robotics" in output and "http://northwind-robotics.com/pricing" in output
    assert '"pricing_plan"' in output
    assert "\n-$49 /mo per robot" in output and "\n+$59 /mo per robot" in output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "diff_chg" in html and "$59" in html
    shown = json.loads(run(demo_state, "changes", "show", change_id, "--json").output)
    assert shown["structured_delta"]["updated"]["pricing_plan"][0]["changes"]["price"] == [
        49.0,
        59.0,
    ]


def test_the_feed_is_valid_atom_with_stable_ids(demo_state: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.atom", tmp_path / "b.atom"
    run(demo_state, "feed", "--out", str(first))
    run(demo_state, "feed", "--out", str(second))
    parsed = feedparser.parse(first.read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.version == "atom10"
    assert parsed.feed.id and parsed.feed.title and parsed.feed.updated
    inbox = json.loads(run(demo_state, "changes", "--format", "json").output)
    assert len(parsed.entries) == len(inbox)
    for entry in parsed.entries:
        assert entry.id.startswith("urn:catlas:change:chg_")
        assert entry.title and entry.updated and entry.link.startswith("http://")
    assert [e.id for e in parsed.entries] == [
        e.id for e in feedparser.parse(second.read_bytes()).entries
    ]
    orbit = tmp_path / "orbit.atom"
    run(demo_state, "feed", "--company", "Orbit Pay", "--kind", "major", "--out", str(orbit))
    entries = feedparser.parse(orbit.read_bytes()).entries
    assert entries and all("Orbit Pay" in e.title for e in entries)
    assert {e.id for e in entries} <= {e.id for e in parsed.entries}
