"""Discovery fixtures: the truth file kept next to the fixture web."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from fixture_web import default_root

TRUTH = default_root().parent / "discovery_truth.toml"


def truth() -> list[dict[str, Any]]:
    return tomllib.loads(TRUTH.read_text())["company"]


@pytest.fixture(scope="session")
def companies() -> list[dict[str, Any]]:
    return truth()
