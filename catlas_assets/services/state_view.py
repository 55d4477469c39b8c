"""Read model of the Dagster sensors: the few questions they ask between runs.

A sensor evaluation is not a run: it records nothing and must answer in milliseconds,
every 30 to 60 seconds. Each question is one indexed read, asked only when the previous
answer did not already settle the evaluation; none of them writes state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catlas_assets.services.change_inbox import awaiting_delivery
from catlas_assets.services.onboarding import pending_jobs
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings


@dataclass(frozen=True)
class StateView:
    runtime: Runtime

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    def now(self) -> datetime:
        return self.runtime.clock.now()

    def next_due_at(self) -> datetime | None:
        """When the earliest claimable sensor falls due (one probe per claimable status)."""
        return self.runtime.store.next_due_at()

    def due_discover_jobs(self, now: datetime) -> int:
        """Discover jobs an onboarding batch would claim at `now`."""
        return pending_jobs(self.runtime, now)

    def changes_awaiting_delivery(self) -> list[dict[str, Any]]:
        return awaiting_delivery(self.runtime)
