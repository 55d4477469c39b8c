"""`catlas sensors import FILE.csv`: declare sensors in bulk from a list of URLs, idempotently.

Columns: `company`, `surface`, `url` and optionally `connector` (default `generic_html`).
A company named in the file and not yet known is created (by name, without a website, so
its discovery job finds nothing to add: the file says what to watch). A sensor already
known for the same company, surface and URL is left as it is, so importing the same file
twice adds nothing. A bad row is reported with its line number and skipped; the good rows
are kept, and the command exits non-zero when any row was rejected.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catlas_assets.domain.connectors import registry as connectors
from catlas_assets.domain.urls import check_url
from catlas_assets.domain.vocabulary import Surface
from catlas_assets.errors import CatlasError
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime

COLUMNS = ("company", "surface", "url")
DEFAULT_CONNECTOR = "generic_html"


@dataclass(frozen=True)
class SensorRow:
    line: int
    company: str
    surface: str
    url: str
    connector: str


@dataclass
class SensorImportReport:
    added: int = 0
    existing: int = 0
    companies_added: int = 0
    problems: list[str] = field(default_factory=list)


def _row(line: int, raw: dict[str, Any]) -> SensorRow:
    company = (raw.get("company") or "").strip()
    if not company:
        raise ValueError("company is empty")
    surface = (raw.get("surface") or "").strip()
    try:
        Surface(surface)
    except ValueError:
        raise ValueError(
            f"unknown surface {surface!r}; one of: {', '.join(s.value for s in Surface)}"
        ) from None
    url = check_url((raw.get("url") or "").strip())
    connector = (raw.get("connector") or "").strip() or DEFAULT_CONNECTOR
    connectors.get(connector)
    return SensorRow(line, company, surface, url, connector)


def read_rows(path: Path) -> tuple[list[SensorRow], list[str]]:
    """The valid rows and, for each bad one, `line N: why`."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise CatlasError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CatlasError(f"{path} is not UTF-8 text") from None
    reader = csv.DictReader(text.splitlines())
    header = [f.strip() for f in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise CatlasError(
            f"{path}: the header must name the columns company,surface,url[,connector] "
            f"(missing: {', '.join(missing)})"
        )
    rows: list[SensorRow] = []
    bad: list[str] = []
    for line, raw in enumerate(reader, start=2):
        raw = {(k or "").strip(): v for k, v in raw.items()}
        try:
            rows.append(_row(line, raw))
        except (ValueError, CatlasError) as exc:
            bad.append(f"line {line}: {exc}")
    return rows, bad


class _Companies:
    """Company ids by name, created on first use, with the sensors each already has."""

    def __init__(self, runtime: Runtime, report: SensorImportReport) -> None:
        self.runtime = runtime
        self.report = report
        self.ids: dict[str, int] = {}
        self.known: dict[int, set[tuple[str, str]]] = {}

    def id_for(self, name: str) -> int:
        if name not in self.ids:
            found = self.runtime.store.company_by_name(name)
            if found is None:
                company_id = catalog.add_company(self.runtime, name=name, website=None)
                self.report.companies_added += 1
            else:
                company_id = found["id"]
            self.ids[name] = company_id
            self.known[company_id] = {
                (r["surface"], r["url"])
                for r in self.runtime.store.list_sensors(company_id=company_id)
            }
        return self.ids[name]


def import_sensors(
    runtime: Runtime,
    rows: list[SensorRow],
    *,
    fetch_now: bool = True,
    on_row: Callable[[], None] | None = None,
) -> SensorImportReport:
    report = SensorImportReport()
    companies = _Companies(runtime, report)
    for row in rows:
        try:
            company_id = companies.id_for(row.company)
            known = companies.known[company_id]
            if (row.surface, row.url) in known:
                report.existing += 1
            else:
                catalog.add_sensor(
                    runtime,
                    company_id=company_id,
                    surface=row.surface,
                    url=row.url,
                    connector=row.connector,
                    fetch_now=fetch_now,
                )
                known.add((row.surface, row.url))
                report.added += 1
        except CatlasError as exc:
            report.problems.append(f"line {row.line}: {exc}")
        if on_row is not None:
            on_row()
    return report
