"""The state store's catalog as plain rows, for the lake's dimension snapshots."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from resources.state.schema import change_inbox, companies, domains, sensors
from resources.state.store import StateStore


def company_rows(store: StateStore) -> list[dict[str, Any]]:
    counts = (
        select(sensors.c.company_id, func.count().label("sensor_count"))
        .group_by(sensors.c.company_id)
        .subquery()
    )
    query = (
        select(
            companies.c.id.label("company_id"),
            companies.c.name.label("company_name"),
            companies.c.website,
            companies.c.domain,
            companies.c.importance,
            companies.c.tier,
            companies.c.onboarding_status,
            func.coalesce(counts.c.sensor_count, 0).label("sensor_count"),
            companies.c.created_at,
            companies.c.updated_at,
        )
        .outerjoin(counts, counts.c.company_id == companies.c.id)
        .order_by(companies.c.id)
    )
    return _rows(store, query)


def domain_rows(store: StateStore) -> list[dict[str, Any]]:
    query = (
        select(
            domains.c.id.label("domain_id"),
            domains.c.company_id,
            companies.c.name.label("company_name"),
            domains.c.domain,
            domains.c.kind,
            domains.c.created_at,
        )
        .join(companies, companies.c.id == domains.c.company_id)
        .order_by(domains.c.id)
    )
    return _rows(store, query)


def sensor_rows(store: StateStore) -> list[dict[str, Any]]:
    query = (
        select(
            sensors.c.id.label("sensor_id"),
            sensors.c.company_id,
            companies.c.name.label("company_name"),
            companies.c.website,
            sensors.c.surface,
            sensors.c.url,
            sensors.c.connector,
            sensors.c.status,
            sensors.c.tier,
            sensors.c.discovery_method,
            sensors.c.current_interval_s,
            sensors.c.consecutive_failures,
            sensors.c.last_failure_class,
            sensors.c.last_fetched_at,
            sensors.c.last_success_at,
            sensors.c.last_change_at,
            sensors.c.created_at,
            sensors.c.retired_at,
            sensors.c.config,
        )
        .join(companies, companies.c.id == sensors.c.company_id)
        .order_by(sensors.c.id)
    )
    return _rows(store, query)


def delivery_rows(store: StateStore) -> list[dict[str, Any]]:
    query = (
        select(
            change_inbox.c.change_id,
            change_inbox.c.company_id,
            change_inbox.c.delivered_at,
            change_inbox.c.attempts,
        )
        .where(change_inbox.c.status == "delivered")
        .order_by(change_inbox.c.delivered_at, change_inbox.c.change_id)
    )
    return _rows(store, query)


def _rows(store: StateStore, query: Any) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]
