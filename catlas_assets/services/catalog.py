"""Companies and their sensors: adding, listing, importing the fixture declarations."""

from __future__ import annotations

from typing import Any

from catlas_assets.domain.company_names import checked_company_name
from catlas_assets.domain.connectors import registry as connectors
from catlas_assets.domain.seeding import seed_sensor
from catlas_assets.domain.urls import check_url, normalize_website, registrable_domain
from catlas_assets.domain.vocabulary import DiscoveryMethod, SensorStatus, Surface
from catlas_assets.errors import CatlasError, NotFoundError
from catlas_assets.ids import row_id
from catlas_assets.services.runtime import Runtime
from resources.state.onboarding_store import enqueue_discover


def add_company(
    runtime: Runtime, *, name: str, website: str | None, importance: float = 0.5, tier: int = 3
) -> int:
    name = checked_company_name(name)
    if not 0 <= importance <= 1:
        raise CatlasError(f"importance {importance} is outside 0-1")
    if tier not in (1, 2, 3, 4):
        raise CatlasError(f"tier {tier} is not one of 1, 2, 3, 4")
    website = normalize_website(website) if website else None
    domain = registrable_domain(website) if website else None
    company_id = runtime.store.add_company(
        name=name,
        website=website,
        domain=domain,
        importance=importance,
        tier=tier,
        now=runtime.clock.now(),
    )
    # Every new company waits for its discovery (spec: Discovery, onboarding).
    enqueue_discover(
        runtime.store,
        company_id,
        now=runtime.clock.now(),
        max_attempts=runtime.settings.onboarding_max_attempts,
    )
    return company_id


def change_website(runtime: Runtime, company_id: int, website: str | None) -> bool:
    """Give a company another website; True (and its discovery queued again) if it changed.

    This is what brings a `no_website` company back: discovery never retries it on its own.
    """
    website = normalize_website(website) if website else None
    company = runtime.store.company(company_id)
    if company["website"] == website:
        return False
    runtime.store.update_company(
        company_id,
        website=website,
        domain=registrable_domain(website) if website else None,
        onboarding_error=None,
        updated_at=runtime.clock.now(),
    )
    enqueue_discover(
        runtime.store,
        company_id,
        now=runtime.clock.now(),
        max_attempts=runtime.settings.onboarding_max_attempts,
    )
    return True


def resolve_company(runtime: Runtime, ref: str) -> dict[str, Any]:
    """A company by id or by exact name."""
    company_id = row_id(ref, "company")
    if company_id is not None:
        return runtime.store.company(company_id)
    company = runtime.store.company_by_name(ref)
    if company is None:
        raise NotFoundError(f"no company named {ref!r}")
    return company


def add_sensor(
    runtime: Runtime,
    *,
    company_id: int,
    surface: str,
    url: str,
    connector: str = "generic_html",
    method: DiscoveryMethod = DiscoveryMethod.MANUAL,
    confidence: float = 1.0,
    fetch_now: bool = True,
) -> int:
    try:
        surface_value = Surface(surface)
    except ValueError:
        raise CatlasError(
            f"unknown surface {surface!r}; one of: {', '.join(s.value for s in Surface)}"
        ) from None
    url = check_url(url)
    connectors.get(connector)  # an unknown connector name is refused here, not at run time
    company = runtime.store.company(company_id)
    now = runtime.clock.now()
    settings = runtime.settings
    seed = seed_sensor(
        surface=surface_value,
        connector=connector,
        company_importance=company["importance"],
        company_tier=company["tier"],
        confidence=confidence,
        min_interval_s=settings.min_interval_s,
        max_interval_s=settings.max_interval_s,
        now=now,
        fetch_now=fetch_now,
        rng=runtime.rng,
    )
    return runtime.store.add_sensor(
        company_id=company_id,
        surface=surface_value,
        url=url,
        connector=connector,
        status=SensorStatus.PENDING,
        tier=seed.tier,
        base_interval_s=seed.base_interval_s,
        current_interval_s=seed.base_interval_s,
        next_run_at=seed.next_run_at,
        priority=seed.priority,
        quality_score=seed.quality_score,
        discovery_confidence=confidence,
        discovery_method=method,
        config={},
        created_at=now,
        updated_at=now,
    )


def list_companies(runtime: Runtime) -> list[dict[str, Any]]:
    """Every company with its onboarding status and its number of sensors."""
    return runtime.store.list_companies()


def list_sensors(
    runtime: Runtime,
    *,
    company: str | None = None,
    status: str | None = None,
    surface: str | None = None,
) -> list[dict[str, Any]]:
    """Sensors, filtered by company (id or exact name), status and surface."""
    company_id = resolve_company(runtime, company)["id"] if company else None
    return runtime.store.list_sensors(company_id=company_id, status=status, surface=surface)
