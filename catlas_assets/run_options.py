"""The options every run command shares: `-n/--max-requests`, `--deadline`, `--fail-when`.

Commands that start runs (scheduler, run-sensor, onboarding, repair, crawls) decorate
themselves with `run_options` and turn the values into one `RunControl` and, at the end,
one exit code from the verdicts of the runs they started.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from catlas_assets.domain.verdict import FailWhen
from catlas_assets.services.run_control import RunControl

F = TypeVar("F", bound=Callable[..., Any])

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
    if seconds < 0:
        raise ValueError(f"{text!r}: a duration cannot be negative")
    return seconds


class Duration(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float | int):
            return float(value)
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def run_options(command: F) -> F:
    """Add `-n/--max-requests`, `--deadline` and `--fail-when` to a run command."""
    decorators = [
        click.option(
            "-n",
            "--max-requests",
            type=click.IntRange(0),
            default=None,
            help="Stop after this many HTTP requests (robots.txt and redirect hops included).",
        ),
        click.option(
            "--deadline",
            type=Duration(),
            default=None,
            help="Stop after this much wall-clock time (e.g. 90s, 15m, 1h30m).",
        ),
        click.option(
            "--fail-when",
            type=click.Choice([f.value for f in FailWhen]),
            default=FailWhen.ANY.value,
            show_default=True,
            help="Exit 1 when any / all of the runs failed, or never.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def control_from(max_requests: int | None, deadline: float | None) -> RunControl:
    return RunControl(max_requests=max_requests, deadline_s=deadline)
