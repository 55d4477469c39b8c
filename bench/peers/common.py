"""What every peer script shares: the targets file, the host map, one JSON line of results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def targets(path: str) -> list[dict[str, str]]:
    """[{"url", "host", "path"}, ...] as the benchmark wrote them (URLs carry nginx's port)."""
    return json.loads(Path(path).read_text())


def emit(result: dict[str, Any]) -> None:
    """The peer's figures: one JSON object on the last line of stdout."""
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
