"""Politeness arithmetic, pure: Retry-After, per-domain spacing and the UTC budget day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime


def retry_after_until(value: str | None, now: datetime, *, max_s: float) -> datetime | None:
    """When a `Retry-After` header lets us come back, or None when it says nothing usable.

    Both forms of RFC 9110 10.2.3 are read: delta-seconds and an HTTP-date. A date in the
    past means "now" (nothing to wait for: None); an absurdly far answer is capped at
    `max_s`, so one odd header cannot silence a domain for years.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        seconds = float(int(text[:12]))  # a 40-digit delta is still just "very long"
    else:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)  # HTTP-dates are GMT by definition
        seconds = (when - now).total_seconds()
    if seconds <= 0:
        return None
    return now + timedelta(seconds=min(seconds, max_s))


def spacing_s(
    default_spacing_s: float, crawl_delay_s: float | None, *, max_delay_s: float
) -> float:
    """Seconds between two requests to one domain: the default, raised by Crawl-delay."""
    if crawl_delay_s is None:
        return default_spacing_s
    return max(default_spacing_s, min(crawl_delay_s, max_delay_s))


def budget_day(now: datetime) -> str:
    """The UTC day a domain's `used_today` counts (reset lazily on the first request)."""
    return now.astimezone(UTC).date().isoformat()  # YYYY-MM-DD; a fifth of strftime's cost
