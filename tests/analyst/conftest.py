"""A demo lake for the analyst's tests: fourteen simulated days, lived once per session.

Tests that change state (a delivery) work on a copy (`demo_copy`), so the shared lake stays
as the demo left it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from catlas_assets.services.demo import run_demo
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

DAYS = 14


@pytest.fixture(scope="session")
def demo_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state folder (SQLite file and lake) of a fourteen-day demo."""
    state = tmp_path_factory.mktemp("analyst-demo") / ".catlas"
    result = run_demo(Settings(state_dir=str(state)), days=DAYS)
    assert result.changes, "the demo detected no change"
    return state


@pytest.fixture
def demo_copy(demo_state: Path, tmp_path: Path) -> Path:
    copy = tmp_path / ".catlas"
    shutil.copytree(demo_state, copy)
    return copy


@pytest.fixture
def demo_runtime(demo_state: Path) -> Iterator[Runtime]:
    runtime = Runtime(Settings(state_dir=str(demo_state)))
    try:
        yield runtime
    finally:
        runtime.close()
