"""Read model of the crawl figures: `catlas stats-crawl`, the `crawl_stats` asset and the
metadata of every Dagster crawl tick show the same numbers."""

from __future__ import annotations

from typing import Any

from catlas_assets.services.runtime import Runtime
from resources.state.crawl_stats import crawl_stats as read_crawl_stats

DEFAULT_WINDOW_S = 3600


def crawl_stats(runtime: Runtime, *, window_s: int = DEFAULT_WINDOW_S) -> dict[str, Any]:
    """Throughput over the last `window_s`, outcome mix, sensors by status, the due backlog."""
    return read_crawl_stats(runtime.store.engine, now=runtime.clock.now(), window_s=window_s)
