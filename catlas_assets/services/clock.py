"""The instant a front works at when it holds no runtime (`run-sensor --file`, `diff`)."""

from __future__ import annotations

from datetime import datetime

from catlas_assets.settings import Settings
from resources.clock import clock_for


def now(settings: Settings) -> datetime:
    """`CATLAS_NOW` when it freezes the clock, else the wall clock (UTC)."""
    return clock_for(settings.frozen_now).now()
