"""Output of the list commands: a table for people, CSV or JSON for machines."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

import click

FORMATS = ("table", "csv", "json")


def format_option(default: str = "table") -> Callable[[Any], Any]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=default,
        show_default=True,
        help="table for people; csv or json (typed values, ISO-8601 UTC times) for machines.",
    )


def json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def field_name(column: str) -> str:
    return column.strip().lower().replace(" ", "_").replace("-", "_")


def records(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    names = [field_name(c) for c in columns]
    return [dict(zip(names, row, strict=True)) for row in rows]


def write_json(data: Any) -> None:
    click.echo(json.dumps(data, default=json_value, ensure_ascii=False, indent=2))


def write_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow([field_name(c) for c in columns])
    for row in rows:
        writer.writerow(
            [
                ""
                if v is None
                else json.dumps(v, ensure_ascii=False)
                if isinstance(v, (dict, list))
                else json_value(v)
                if isinstance(v, (datetime, date))
                else v
                for v in row
            ]
        )
    sys.stdout.flush()
