"""Read model of the connector registry with each connector's stats (`catlas connectors`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlas_assets.domain.connectors.registry import CONNECTORS
from catlas_assets.services.runtime import Runtime
from resources.state.connector_stats import all_stats


@dataclass(frozen=True)
class ConnectorRow:
    name: str
    kind: str
    version: str
    runs: int
    failures: int
    schema_failures: int
    entities_last: Any  # "" until the connector has run
    last_run_at: Any
    description: str


def connector_table(runtime: Runtime) -> list[ConnectorRow]:
    """One row per registered connector, in registry order; zeros for one never run."""
    stats = all_stats(runtime.store)
    rows = []
    for name, connector in CONNECTORS.items():
        s = stats.get(name, {}).get("stats") or {}
        rows.append(
            ConnectorRow(
                name=name,
                kind=connector.kind,
                version=connector.version,
                runs=s.get("runs", 0),
                failures=s.get("failures", 0),
                schema_failures=s.get("schema_failures", 0),
                entities_last=s.get("entities_last", ""),
                last_run_at=s.get("last_run_at", ""),
                description=connector.description,
            )
        )
    return rows
