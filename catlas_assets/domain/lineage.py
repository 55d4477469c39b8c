"""Sensor lineage: which sensor took over from which, and the first sensor of each chain.

Pure. A sensor names its predecessor explicitly (`config.predecessor_sensor_id`, written by
repair), or it watches the URL an earlier sensor of the same company and surface was
redirected to (`config.redirect_url`). The lineage id is the first sensor of the chain, so
one surface reads as one history across moves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/").lower() == b.rstrip("/").lower()


def predecessors(sensors: Sequence[Mapping[str, Any]]) -> dict[int, int | None]:
    """Each sensor id to the id of the sensor it took over from (None: a chain's start)."""
    by_id = {int(s["sensor_id"]): s for s in sensors}
    result: dict[int, int | None] = {}
    for sensor in sensors:
        sid = int(sensor["sensor_id"])
        config = sensor.get("config") or {}
        named = config.get("predecessor_sensor_id")
        if isinstance(named, int) and named in by_id and named != sid:
            result[sid] = named
            continue
        moved_here = [
            int(other["sensor_id"])
            for other in sensors
            if int(other["sensor_id"]) < sid
            and other["company_id"] == sensor["company_id"]
            and other["surface"] == sensor["surface"]
            and (other.get("config") or {}).get("redirect_url")
            and _same_url(str((other.get("config") or {})["redirect_url"]), str(sensor["url"]))
        ]
        result[sid] = max(moved_here) if moved_here else None
    return result


def lineage_ids(parents: Mapping[int, int | None]) -> dict[int, int]:
    """Each sensor id to the first sensor of its chain (a cycle ends at its smallest id)."""
    roots: dict[int, int] = {}
    for sid in parents:
        seen = [sid]
        current = parents.get(sid)
        while current is not None and current not in seen:
            seen.append(current)
            current = parents.get(current)
        roots[sid] = min(seen) if current is not None else seen[-1]
    return roots
