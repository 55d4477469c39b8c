"""Load the fixture companies and their hand-declared sensors into the state store."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

from catlas_assets.errors import CatlasError
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime


def load_companies(runtime: Runtime, csv_path: Path) -> dict[str, int]:
    ids: dict[str, int] = {}
    with csv_path.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            try:
                ids[row["name"]] = catalog.add_company(
                    runtime,
                    name=row["name"],
                    website=row.get("website") or None,
                    importance=float(row.get("importance") or 0.5),
                    tier=int(row.get("tier") or 3),
                )
            except (KeyError, ValueError) as exc:
                raise CatlasError(f"{csv_path} line {line}: {exc}") from None
    return ids


def load_sensors(runtime: Runtime, toml_path: Path, companies: dict[str, int]) -> list[int]:
    declared = tomllib.loads(toml_path.read_text()).get("sensor", [])
    ids = []
    for entry in declared:
        company = entry["company"]
        if company not in companies:
            raise CatlasError(f"{toml_path}: sensor for unknown company {company!r}")
        ids.append(
            catalog.add_sensor(
                runtime,
                company_id=companies[company],
                surface=entry["surface"],
                url=entry["url"],
                connector=entry.get("connector", "generic_html"),
            )
        )
    return ids
