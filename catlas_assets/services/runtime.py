"""The runtime: settings plus the adapters built from them, shared by the CLI and Dagster.

Each adapter is built on first use and lives as long as the runtime: the CLI holds one
runtime per command, Dagster one per run (`catlas_assets/defs/resources.py`). The fronts
name the adapters by the types re-exported here (`__all__`), never by importing `resources`.

The adapters are imported when first built, not with this module: a command that needs
no state store or lake (`catlas robots check`) does not pay for SQLAlchemy, pyarrow or DuckDB.
"""

from __future__ import annotations

import os
import random
import socket
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from catlas_assets.settings import Settings
from resources.clock import Clock, clock_for

if TYPE_CHECKING:
    from catlas_assets.domain.observe import Policy
    from catlas_assets.services.observe_pool import ObservePool
    from resources.archive import ObjectArchive
    from resources.fetcher import Fetcher
    from resources.governor import DomainGovernor
    from resources.lake import Lake
    from resources.notifier import WebhookNotifier
    from resources.resolver import Resolver
    from resources.robots_gate import RobotsCache
    from resources.state.domain_budgets import DomainBudgets
    from resources.state.robots_files import RobotsFiles
    from resources.state.store import StateStore
    from resources.storage import Storage

__all__ = ["Lake", "ObjectArchive", "Runtime", "StateStore", "WebhookNotifier", "default_worker_id"]


_EXPORTED = {
    "Lake": "resources.lake",
    "ObjectArchive": "resources.archive",
    "StateStore": "resources.state.store",
    "WebhookNotifier": "resources.notifier",
}


def __getattr__(name: str) -> Any:
    """The re-exported adapter types, imported on first use (PEP 562)."""
    if name in _EXPORTED:
        import importlib

        return getattr(importlib.import_module(_EXPORTED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Runtime:
    settings: Settings
    clock: Clock = field(default=None)  # type: ignore[assignment]
    worker: str = field(default_factory=default_worker_id)
    auto_create_schema: bool = True
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        if self.clock is None:
            self.clock = clock_for(self.settings.frozen_now)

    @cached_property
    def store(self) -> StateStore:
        from resources.state.store import StateStore

        return StateStore.open(
            self.settings.resolved_database_url, auto_create=self.auto_create_schema
        )

    @cached_property
    def storage(self) -> Storage:
        from resources.storage import Storage

        return Storage(self.settings.resolved_lake_url, self.settings.s3_endpoint_url)

    @cached_property
    def lake(self) -> Lake:
        from resources.lake import Lake
        from resources.state.partition_leases import PartitionLeases

        # Partition leases in the state store: every process writing this lake shares it.
        return Lake(self.storage, PartitionLeases(lambda: self.store.engine, self.worker))

    @cached_property
    def archive(self) -> ObjectArchive:
        from resources.archive import ObjectArchive
        from resources.state.archive_index import ArchiveIndex

        return ObjectArchive(self.storage, ArchiveIndex(self.store))

    @cached_property
    def notifier(self) -> WebhookNotifier | None:
        """The change webhook's client; None while the notifier is off (no URL set)."""
        from resources.notifier import WebhookNotifier

        s = self.settings
        if not s.notify_webhook_url:
            return None
        return WebhookNotifier(
            s.notify_webhook_url, timeout_s=s.notify_timeout_s, user_agent=s.user_agent
        )

    @cached_property
    def resolver(self) -> Resolver:
        from resources.resolver import HostMap, Resolver

        hosts = self.settings.hosts
        return Resolver(HostMap.load(hosts) if hosts else None)

    @cached_property
    def robots_cache(self) -> RobotsCache:
        """Parsed robots.txt per origin; outlives ticks, and is backed by the state store
        that every process shares, so each file is fetched once per TTL by all of catlas."""
        from resources.robots_gate import RobotsCache

        def files() -> RobotsFiles:
            from resources.state.robots_files import RobotsFiles

            return RobotsFiles(self.store)

        return RobotsCache(files)

    @cached_property
    def domain_budgets(self) -> DomainBudgets:
        from resources.state.domain_budgets import DomainBudgets

        return DomainBudgets(self.store, self.settings.domain_daily_budget)

    def governor(self) -> DomainGovernor:
        """Per-domain spacing, concurrency and budgets; one per event loop, like the fetcher."""
        from resources.governor import DomainGovernor, GovernorConfig

        s = self.settings
        return DomainGovernor(
            GovernorConfig(
                spacing_s=s.domain_spacing_s,
                concurrency=s.domain_concurrency,
                crawl_delay_max_s=s.crawl_delay_max_s,
                retry_after_max_s=s.retry_after_max_s,
                budget_lease=s.domain_budget_lease,
                # A request lasts a fetch's total timeout at most; a dead worker's turn then
                # frees itself well after any live request would have ended.
                turn_hold_s=2 * s.fetch_total_timeout_s,
            ),
            now=self.clock.now,
            budgets=self.domain_budgets,
        )

    def fetcher(self, *, governed: bool = True, one_off: bool = False) -> Fetcher:
        """A new pooled client; one per worker event loop (httpx clients are loop-bound).

        `governed=False` leaves out the DomainGovernor (no budget, no spacing): only for
        the one-off robots.txt check of `catlas robots check`, and dry runs. `one_off`: a
        command that sends a request or two, which a pool built for thousands does not
        repay (`resources.fetcher._Transport`).
        """
        from resources.fetcher import FetchConfig, Fetcher

        s = self.settings
        return Fetcher(
            FetchConfig(
                user_agent=f"{s.user_agent} (+{s.contact_url})",
                connect_timeout_s=s.fetch_connect_timeout_s,
                read_timeout_s=s.fetch_read_timeout_s,
                total_timeout_s=s.fetch_total_timeout_s,
                max_bytes=s.fetch_max_bytes,
                retries=s.fetch_retries,
                max_redirects=s.max_redirects,
                max_connections=max(8, s.fetch_concurrency),
                robots_ttl_s=s.robots_ttl_s,
                robots_unavailable_retry_s=s.robots_unavailable_retry_s,
                ca_bundle=s.ca_bundle,
            ),
            self.resolver,
            # The one-off check asks the site now: no store opened, nothing shared.
            robots=self.robots_cache if governed else None,
            governor=self.governor() if governed else None,
            now=self.clock.now,
            one_off=one_off,
        )

    @cached_property
    def policy(self) -> Policy:
        from catlas_assets.domain import scheduling
        from catlas_assets.domain.observe import Policy

        s = self.settings
        return Policy(
            limits=scheduling.Limits(
                min_interval_s=s.min_interval_s,
                max_interval_s=s.max_interval_s,
                burst_interval_s=s.burst_interval_s,
                burst_decay=s.burst_decay,
                stability_growth=s.stability_growth,
            ),
            minor_threshold=s.minor_threshold,
            meaningful_threshold=s.meaningful_threshold,
            major_threshold=s.major_threshold,
            critical_threshold=s.critical_threshold,
            keep_noise_snapshots=s.keep_noise_snapshots,
            stale_after_failures=s.stale_after_failures,
            retire_after_failures=s.retire_after_failures,
            extracted_max_items=s.extracted_max_items,
            extracted_max_bytes=s.extracted_max_bytes,
            scheduling_policy=s.scheduling_policy,
        )

    @cached_property
    def observe_pool(self) -> ObservePool:
        """Where sensor runs are decided: worker processes, or this one (`observe_pool.py`)."""
        from catlas_assets.services.observe_pool import ObservePool, pool_size

        return ObservePool(pool_size(self.settings.observe_workers), self.settings.parse_timeout_s)

    def check_ready(self, *, lake: bool = True) -> None:
        """Refuse a run up front when its environment cannot carry it to the end.

        Called before a run records anything (a run row, a claim, an object), so that a
        malformed ``CATLAS_HOSTS`` or an unwritable lake is one error and leaves the state
        store and the lake as they were, instead of failing halfway through the first fetch.
        `lake=False` for a command that fetches and writes nothing (the lake's client is
        not even imported).
        """
        _ = self.resolver  # parses the host map: ConfigError naming the bad line
        if lake:
            self.storage.check_writable()  # StorageError naming the lake

    def close(self) -> None:
        """Release what was opened (the state store's pool, the webhook client), only that."""
        if self.__dict__.get("notifier") is not None:
            self.notifier.close()  # type: ignore[union-attr]
        if "store" in self.__dict__:
            self.store.close()
        if "observe_pool" in self.__dict__:
            self.observe_pool.close()
