"""What may end a run from the outside: `-n` (request budget), `--deadline`, SIGTERM/SIGINT.

One `RunControl` is shared by everything a command runs (a daemon and its ticks): the
deadline is wall-clock time from the command's start, the request budget is spent across
its runs, and a signal sets an event every run polls. The first signal lets in-flight
sensors finish (their claims are committed or released); a second one, or the deadline,
cancels them and releases their claims at once.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

from catlas_assets.domain.run_guard import RuleLimits, RunGuard
from catlas_assets.domain.vocabulary import Stop
from catlas_assets.settings import Settings

NOT_STARTED = "Not started"


@dataclass
class RunControl:
    max_requests: int | None = None
    deadline_s: float | None = None
    started: float = field(default_factory=time.monotonic)
    requests_used: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _force: threading.Event = field(default_factory=threading.Event)
    reason: str = ""

    # -- asking ---------------------------------------------------------------------------
    def deadline_passed(self) -> bool:
        return self.deadline_s is not None and time.monotonic() - self.started >= self.deadline_s

    def remaining_s(self) -> float | None:
        if self.deadline_s is None:
            return None
        return max(0.0, self.deadline_s - (time.monotonic() - self.started))

    def budget_left(self) -> int | None:
        if self.max_requests is None:
            return None
        return max(0, self.max_requests - self.requests_used)

    def interruption(self) -> str | None:
        """Why the command must stop now (a signal or the deadline), or None."""
        if self._stop.is_set():
            return self.reason or "Interrupted"
        if self.deadline_passed():
            return f"Reached the deadline ({self.deadline_s:g} s)"
        return None

    def must_cancel(self) -> bool:
        """In-flight work is abandoned (its claims released) rather than awaited."""
        return self._force.is_set() or self.deadline_passed()

    def stop_before_start(self) -> str | None:
        """'Not started' when a signal, the deadline or a spent budget ends a run up front."""
        if self.interruption() is not None:
            return NOT_STARTED
        return None

    # -- telling --------------------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        if self._stop.is_set():
            self._force.set()  # a second signal: stop waiting for in-flight work
            return
        self.reason = reason
        self._stop.set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds` (never past the deadline); True when woken by a stop."""
        remaining = self.remaining_s()
        if remaining is not None:
            seconds = min(seconds, remaining)
        return self._stop.wait(max(0.0, seconds))

    def spend(self, requests: int) -> None:
        self.requests_used += requests

    def guard(self, settings: Settings) -> RunGuard:
        """A fresh guard for one run, with what is left of the command's request budget."""
        return RunGuard(
            RuleLimits(
                settings.max_consecutive_failures,
                settings.max_error_rate,
                settings.min_requests_for_error_rate,
            ),
            max_requests=self.budget_left(),
        )

    def budget_stop(self) -> tuple[Stop, str] | None:
        left = self.budget_left()
        if left is not None and left <= 0:
            return Stop.MAX_REQUESTS, f"Reached max requests limit ({self.max_requests})"
        return None


@contextmanager
def signals_stop(control: RunControl) -> Iterator[None]:
    """SIGTERM and SIGINT ask the run to stop (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        control.request_stop(f"Interrupted by {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
