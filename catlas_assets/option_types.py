"""The typed values of command-line options, range-checked before they reach a database.

Every command takes its ids, counts, ports and durations through these types, so a value
such as `²`, `99999999999999999999`, `-1`, `nan` or `inf` is one usage error (exit 2)
naming the option, never a traceback from SQLite, PostgreSQL or arithmetic.
"""

from __future__ import annotations

import math
import re
from typing import Any

import click

from catlas_assets.errors import CatlasError
from catlas_assets.ids import INT64_MAX, row_id

# Far enough for any deadline or look-back, near enough that a date minus it stays a date.
MAX_DURATION_S = 100 * 365 * 86400

ROW_ID = click.IntRange(1, INT64_MAX)
PORT = click.IntRange(1, 65535)
PORT_OR_ANY = click.IntRange(0, 65535)  # 0: the system picks a free port
DAY_NUMBER = click.IntRange(0, MAX_DURATION_S // 86400)  # a simulated day, 0 the first


def count(minimum: int = 1) -> click.IntRange:
    """A number of things (a limit, a request budget): `minimum` up to what a database holds."""
    return click.IntRange(minimum, INT64_MAX)


class Fraction(click.FloatRange):
    """A finite share within [0, 1] (click's FloatRange alone lets `nan` through)."""

    name = "fraction"

    def __init__(self) -> None:
        super().__init__(0, 1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a number within [0, 1]", param, ctx)
        return number


_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(text: str) -> float:
    """`90`, `90s`, `1.5m`, `1h30m`, `2d` -> seconds; anything else is a ValueError."""
    value = text.strip().lower()
    if not value:
        raise ValueError("an empty duration")
    try:
        seconds = float(value)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _PART.finditer(value):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(value):
            raise ValueError(f"{text!r} is not a duration (e.g. 90s, 15m, 1h30m)") from None
    if not math.isfinite(seconds):
        raise ValueError(f"{text!r} is not a duration (e.g. 90s, 15m, 1h30m)")
    if seconds < 0:
        raise ValueError(f"{text!r}: a duration cannot be negative")
    if seconds > MAX_DURATION_S:
        raise ValueError(f"{text!r}: a duration is at most 100 years")
    return seconds


class Duration(click.ParamType):
    """A duration in seconds; `positive` refuses zero (a look-back window of nothing)."""

    name = "duration"

    def __init__(self, *, positive: bool = False) -> None:
        self.positive = positive

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            seconds = parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if self.positive and seconds <= 0:
            self.fail(f"{value!r}: the duration must be above zero", param, ctx)
        return seconds


class CompanyRef(click.ParamType):
    """A company by id (ASCII digits, a row id) or by exact name (anything else)."""

    name = "company"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        try:
            row_id(text, "company")
        except CatlasError as exc:
            self.fail(str(exc), param, ctx)
        return text
