"""Site-crawl configs and what the fronts read about the crawl queue and its runs."""

from __future__ import annotations

from typing import Any

from catlas_assets.domain.crawl_scope import ConfigScope, default_allowed_domains
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import CrawlStatus, Surface, Transition
from catlas_assets.errors import CatlasError, NotFoundError
from catlas_assets.services.runtime import Runtime
from resources.state import site_crawl_store as pages

Row = dict[str, Any]


def add_config(
    runtime: Runtime,
    name: str,
    *,
    company: str,
    base_url: str,
    allow_domains: list[str] | None = None,
    max_pages: int | None = None,
    surface: str = Surface.BLOG.value,
) -> int:
    """A new config; the company is created when it is not known yet (website: base URL)."""
    if "://" not in base_url:
        raise CatlasError(f"--base-url needs a full URL, got {base_url!r}")
    if pages.config_by_name(runtime.store, name) is not None:
        raise CatlasError(f"a crawl config named {name!r} already exists")
    rules = list(allow_domains or []) or default_allowed_domains(base_url)
    scope = ConfigScope(tuple(rules))  # a bad regex is refused here
    if not scope.allows(base_url):
        raise CatlasError(f"the base URL {base_url} is outside the config's own allowed domains")
    now = runtime.clock.now()
    found = runtime.store.company_by_name(company)
    company_id = found["id"] if found else runtime.store.add_company(
        name=company, website=base_url, domain=registrable_domain(base_url),
        importance=0.5, tier=3, now=now,
    )  # fmt: skip
    return pages.add_config(
        runtime.store, name=name, company_id=company_id, base_url=base_url,
        allowed_domains=rules, max_pages=max_pages, surface=surface,
        created_at=now, updated_at=now,
    )  # fmt: skip


def list_configs(runtime: Runtime) -> list[Row]:
    return pages.list_configs(runtime.store)


def config_webpages(runtime: Runtime, config: str, status: str | None = None) -> list[Row]:
    row = pages.config_by_name(runtime.store, config)
    if row is None:
        raise NotFoundError(f"no crawl config named {config!r}")
    if status is not None and status not in {s.value for s in CrawlStatus}:
        raise CatlasError(f"unknown crawl status {status!r}")
    scope = ConfigScope(tuple(row["allowed_domains"]))
    hosts = scope.hosts_in(pages.distinct_hosts(runtime.store))
    return pages.list_pages(runtime.store, hosts, status)


def run_events(runtime: Runtime, run_id: str, transition: str | None = None) -> list[Row]:
    if transition is not None:
        Transition(transition)
    return pages.run_events_of(runtime.store, run_id, transition=transition)


def reconcile_run(runtime: Runtime, run_id: str, *, alive: bool) -> Row:
    """Derive a launched run's completion from its own tracker (its row), never page counts.

    A run whose process is gone while its row still says RUNNING failed without a word:
    it becomes FAILED with that message.
    """
    row = runtime.store.run(run_id)
    if row is None:
        raise NotFoundError(f"no run {run_id!r}")
    if row["status"] in ("COMPLETED", "FAILED") or alive:
        return row
    message = f"the {row['launcher']} process {row['launch_handle'] or ''} ended without finishing"
    pages.update_run(
        runtime.store, run_id, status="FAILED", error_message=" ".join(message.split()),
        completed_at=runtime.clock.now(), stop="error", outcome="failed",
    )  # fmt: skip
    updated = runtime.store.run(run_id)
    assert updated is not None
    return updated
