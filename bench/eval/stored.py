"""Read back what catlas stored: the SQLite state file and the Parquet lake (via DuckDB).

The eval is a measurement, so it reads the stored rows directly instead of going through
the code under test (as tests/cli/cli_harness.py does).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb


@dataclass
class Stored:
    companies: list[dict[str, Any]] = field(default_factory=list)
    sensors: list[dict[str, Any]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    baseline_snapshots: set[str] = field(default_factory=set)
    requests_by_company: dict[int, int] = field(default_factory=dict)


def _rows(db: Path, query: str) -> list[dict[str, Any]]:
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in con.execute(query).fetchall()]
    finally:
        con.close()


def lake(state_dir: Path, table: str, columns: str) -> list[dict[str, Any]]:
    files = sorted((state_dir / "lake" / table).glob("date=*/hour=*/*.parquet"))
    if not files:
        return []
    con = duckdb.connect(":memory:")
    try:
        relation = con.sql(
            f"SELECT {columns} FROM read_parquet({[str(f) for f in files]}, union_by_name = true)"
        )
        names = list(relation.columns)
        return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
    finally:
        con.close()


def read(state_dir: Path) -> Stored:
    db = state_dir / "state.db"
    stored = Stored()
    stored.companies = _rows(
        db,
        "SELECT id, name, website, domain, onboarding_status, onboarding_error, stats FROM companies",
    )
    for company in stored.companies:
        company["stats"] = json.loads(company["stats"] or "{}")
    stored.sensors = _rows(
        db, "SELECT id, company_id, surface, url, status, connector, discovery_method FROM sensors"
    )
    stored.changes = lake(
        state_dir,
        "changes",
        "change_id, company_id, sensor_id, surface, detected_at, kind, summary",
    )
    stored.events = lake(
        state_dir,
        "entity_events",
        "event_id, company_id, sensor_id, entity_type, entity_key, event, observed_at, snapshot_id, attributes",
    )
    stored.baseline_snapshots = {
        row["snapshot_id"]
        for row in lake(state_dir, "snapshots", "snapshot_id, version")
        if row["version"] == 1
    }
    for row in lake(state_dir, "observations", "company_id, requests"):
        key = int(row["company_id"] or 0)
        stored.requests_by_company[key] = stored.requests_by_company.get(key, 0) + int(
            row["requests"] or 0
        )
    return stored
