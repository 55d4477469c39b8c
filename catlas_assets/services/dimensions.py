"""Export the state store's catalog into the lake as daily dimension snapshots.

`companies`, `domains`, `sensors`, `change_deliveries` and `webpages` are written as one Parquet file
per UTC day, rewritten at each compaction (and after each delivery pass), so SQL over the
lake sees names, URLs, lineage and what `catlas changes` sees as delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlas_assets.domain.repair import lineage_of
from catlas_assets.services.runtime import Runtime
from resources.lake_tables import DIMENSIONS
from resources.state import catalog_export, site_crawl_store

# The dimension names, for the fronts (the Dagster assets).
DIMENSION_NAMES = tuple(DIMENSIONS)

# The one delivery channel today: the webhook notifier (`catlas notify`).
WEBHOOK_CHANNEL = "webhook"


@dataclass(frozen=True)
class DimensionExport:
    day: str
    rows: dict[str, int]


def _sensors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sensor rows with their lineage as repair recorded it (the lake rows carry the same)."""
    out = []
    for row in rows:
        config = row.pop("config") or {}
        sid = int(row["sensor_id"])
        predecessor = config.get("predecessor_id")
        out.append(
            {
                **row,
                "redirect_url": config.get("redirect_url"),
                "predecessor_sensor_id": int(predecessor) if predecessor else None,
                "lineage_id": lineage_of(sid, config),
            }
        )
    return out


def _webpages(runtime: Runtime) -> list[dict[str, Any]]:
    columns = set(DIMENSIONS["webpages"].schema.names)
    return [
        {"webpage_id": row["id"], **{k: v for k, v in row.items() if k in columns}}
        for row in site_crawl_store.all_pages(runtime.store)
    ]


def export_webpages(runtime: Runtime) -> None:
    """Today's snapshot of the site-crawl queue alone (after each site crawl)."""
    now = runtime.clock.now()
    rows = [{**r, "exported_at": now} for r in _webpages(runtime)]
    runtime.lake.write_dimension("webpages", rows, f"{now:%Y-%m-%d}")


def export_dimensions(runtime: Runtime) -> DimensionExport:
    now = runtime.clock.now()
    store = runtime.store
    tables = {
        "companies": catalog_export.company_rows(store),
        "domains": catalog_export.domain_rows(store),
        "sensors": _sensors(catalog_export.sensor_rows(store)),
        "change_deliveries": [
            {**row, "channel": WEBHOOK_CHANNEL} for row in catalog_export.delivery_rows(store)
        ],
        "webpages": _webpages(runtime),
    }
    day = f"{now:%Y-%m-%d}"
    for name, rows in tables.items():
        runtime.lake.write_dimension(name, [{**r, "exported_at": now} for r in rows], day)
    return DimensionExport(day, {name: len(rows) for name, rows in tables.items()})
