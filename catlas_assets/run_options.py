"""The options every run command shares: `-n/--max-requests`, `--deadline`, `--fail-when`.

Commands that start runs (scheduler, run-sensor, onboarding, repair, crawls) decorate
themselves with `run_options` and turn the values into one `RunControl` and, at the end,
one exit code from the verdicts of the runs they started.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from catlas_assets.domain.verdict import FailWhen
from catlas_assets.option_types import Duration, count
from catlas_assets.services.run_control import RunControl

F = TypeVar("F", bound=Callable[..., Any])


def run_options(command: F) -> F:
    """Add `-n/--max-requests`, `--deadline` and `--fail-when` to a run command."""
    decorators = [
        click.option(
            "-n",
            "--max-requests",
            type=count(0),
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
