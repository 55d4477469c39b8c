"""How `-n` and `--deadline` bound a batch of whole units of work (an onboarding batch), pure.

A unit (one company's discovery) keeps its own budget and is never cut in the middle; the
batch only decides, before each unit, whether it may start. A unit's requests are known
when it finishes, so each unit still in flight is counted as at least one request: the
batch never starts a unit once the budget is spent or would be by the units in flight.
Nothing here reads a clock; the caller passes why it must stop (a signal, the deadline).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain.vocabulary import Stop

NOT_STARTED = "Not started"


@dataclass
class BatchBound:
    max_requests: int | None = None  # what is left of the command's budget at the start
    requests: int = 0
    in_flight: int = 0
    started: int = 0
    stop: Stop | None = None
    detail: str = ""

    def may_start(self, interruption: str | None) -> bool:
        """Whether the next unit may start; an interruption or a spent budget ends the batch."""
        if self.stop is not None:
            return False
        if interruption is not None:
            self.stop, self.detail = Stop.INTERRUPTED, interruption
            return False
        if self.max_requests is not None and self.requests + self.in_flight >= self.max_requests:
            if self.in_flight == 0:
                self.stop = Stop.MAX_REQUESTS
                self.detail = f"Reached max requests limit ({self.max_requests})"
            return False
        self.in_flight += 1
        self.started += 1
        return True

    def finished(self, requests: int) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self.requests += requests

    def settle(self, not_reached: int) -> None:
        """At the end: units left waiting while others were in flight were cut by the budget."""
        if self.stop is None and not_reached and self.max_requests is not None:
            self.stop = Stop.MAX_REQUESTS
            self.detail = f"Reached max requests limit ({self.max_requests})"

    @property
    def verdict_detail(self) -> str:
        """The stop's detail; exactly "Not started" when no unit started at all (spec 001)."""
        if self.stop is not None and self.started == 0:
            return NOT_STARTED
        return self.detail
