"""Sensors blocked by robots.txt: look again when due, and unblock the ones it now allows.

The scheduler never claims a `blocked` sensor (spec). Before each tick, the blocked
sensors whose `next_run_at` has come are checked against their origin's robots.txt —
the cached file, or a fresh one once its TTL has passed — and only robots.txt is asked,
never the page. Allowed again: the sensor is `active`, due now (so this very tick fetches
it) and its `blocked_source` review item is closed. Still disallowed, or robots.txt
unavailable: it waits until the cached answer expires.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from catlas_assets.services import event_loop
from catlas_assets.services.runtime import Runtime
from resources.governor import Postponed
from resources.state.blocked_sensors import BlockedSensors


@dataclass
class Recheck:
    unblocked: list[int] = field(default_factory=list)
    still_blocked: list[int] = field(default_factory=list)
    postponed: list[int] = field(default_factory=list)


def recheck_blocked(runtime: Runtime, *, limit: int | None = None) -> Recheck:
    """Check at most `limit` (default `robots_recheck_batch`) due blocked sensors."""
    blocked = BlockedSensors(runtime.store)
    due = blocked.due(runtime.clock.now(), limit or runtime.settings.robots_recheck_batch)
    if not due:
        return Recheck()
    return event_loop.run(_recheck(runtime, blocked, due))


async def _recheck(runtime: Runtime, blocked: BlockedSensors, due: list[dict]) -> Recheck:
    result = Recheck()
    agent = runtime.settings.user_agent
    async with runtime.fetcher() as fetcher:
        for row in due:
            try:
                entry = await fetcher.robots_for(row["url"])
            except Postponed as postponed:
                now = runtime.clock.now()
                until = postponed.retry_at or now
                await asyncio.to_thread(
                    blocked.postpone,
                    row["id"],
                    until,
                    now,
                    f"robots.txt not rechecked: {postponed}",
                )
                result.postponed.append(row["id"])
                continue
            now = runtime.clock.now()
            if entry.unavailable:
                await asyncio.to_thread(
                    blocked.postpone, row["id"], entry.expires_at, now, entry.unavailable
                )
                result.postponed.append(row["id"])
                continue
            decision = entry.robots.decide(row["url"], agent)
            if decision.allowed:
                if await asyncio.to_thread(blocked.unblock, row["id"], now):
                    result.unblocked.append(row["id"])
            else:
                detail = f"{row['url']} {decision.describe()} of {entry.source_url}"
                await asyncio.to_thread(blocked.postpone, row["id"], entry.expires_at, now, detail)
                result.still_blocked.append(row["id"])
    return result
