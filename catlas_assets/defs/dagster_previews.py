"""The two Dagster APIs catlas builds on that the pinned Dagster (1.13) still labels
preview or beta, and the one place their warnings are silenced.

Partitioned asset checks (one evaluation per hour, `checks.py`) and a backfill policy on an
asset (a range backfill as one run, `history.py`, `dimensions.py`) are Dagster's own way to
get those behaviours, and Dagster warns on every definition that uses them, in every
process that loads the code location. Only these two warnings, only while those
definitions are built, are ignored: any other preview or beta API still warns. Drop this
when a Dagster upgrade marks them stable (the tests then see no warning to filter).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from dagster import BetaWarning, PreviewWarning

PARTITIONED_CHECK = r"Specifying a partitions_def on an AssetCheckSpec is currently in preview"
ASSET_BACKFILL_POLICY = r"Parameter `backfill_policy` of function `asset` is currently in beta"


@contextmanager
def _ignoring(message: str, category: type[Warning]) -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=message, category=category)
        yield


def partitioned_checks() -> AbstractContextManager[None]:
    return _ignoring(PARTITIONED_CHECK, PreviewWarning)


def asset_backfill_policy() -> AbstractContextManager[None]:
    return _ignoring(ASSET_BACKFILL_POLICY, BetaWarning)
