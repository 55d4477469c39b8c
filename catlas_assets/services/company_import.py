"""`catlas companies import FILE.csv`: add companies in bulk, idempotently.

Columns: `name`, `website`, `importance` (0-1, default 0.5), `tier` (1-4, default 3).
A website is taken as people write it (`acme.com`, `WWW.Acme.com/en/`, an IDN) and stored
in its canonical form (domain/urls.normalize_website). A bad row is reported with its line
number and skipped; the good rows are kept, and the command then exits 2. A file that is
not well-formed CSV is refused whole before anything is stored (`read_rows`). A company
already known by name is left as it is, so importing the same file twice adds nothing,
except a new website for it: that is stored and its discovery queued again.
Every new company gets its discover job queued (catalog.add_company).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catlas_assets.domain.company_names import checked_company_name
from catlas_assets.domain.urls import normalize_website
from catlas_assets.errors import CatlasError
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime


@dataclass(frozen=True)
class CompanyRow:
    line: int
    name: str
    website: str | None
    importance: float
    tier: int


@dataclass
class ImportReport:
    added: int = 0
    existing: int = 0
    moved: int = 0  # known companies whose website the file changes (discovery queued again)
    problems: list[str] = field(default_factory=list)


def _row(line: int, raw: dict[str, Any]) -> CompanyRow:
    name = checked_company_name(raw.get("name") or "")
    website = (raw.get("website") or "").strip() or None
    if website:
        website = normalize_website(website)
    importance_text = (raw.get("importance") or "").strip()
    tier_text = (raw.get("tier") or "").strip()
    try:
        importance = float(importance_text) if importance_text else 0.5
    except ValueError:
        raise ValueError(f"importance {importance_text!r} is not a number") from None
    if not 0 <= importance <= 1:
        raise ValueError(f"importance {importance} is outside 0-1")
    if tier_text not in ("", "1", "2", "3", "4"):
        raise ValueError(f"tier {tier_text!r} is not one of 1, 2, 3, 4")
    return CompanyRow(line, name, website, importance, int(tier_text or 3))


def read_rows(path: Path) -> tuple[list[CompanyRow], list[str]]:
    """The valid rows and, for each bad one, `line N: why`.

    A file that is not well-formed CSV (an unclosed quote, a field over 128 KiB, a NUL
    byte) is refused whole, naming its line: guessing where a row ends could merge two
    companies into one.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise CatlasError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CatlasError(f"{path} is not UTF-8 text") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise CatlasError(f"{path} line {line}: a NUL byte (not a text file)")
    header, records = _records(path, text)
    if "name" not in header:
        raise CatlasError(
            f"{path}: the header must name a `name` column (name,website,importance,tier)"
        )
    rows: list[CompanyRow] = []
    bad: list[str] = []
    for line, values in records:
        raw = dict(zip(header, values, strict=False))
        try:
            rows.append(_row(line, raw))
        except (ValueError, CatlasError) as exc:
            bad.append(f"line {line}: {exc}")
    return rows, bad


def _records(path: Path, text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header's cells and (first line, cells) of each later non-blank record."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    records: list[tuple[int, list[str]]] = []
    while True:
        line = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            why = str(exc)
            if "end of data" in why:
                why = "a quote is never closed"
            elif "field limit" in why:
                why = f"a field is over {csv.field_size_limit() // 1024} KiB"
            raise CatlasError(f"{path} line {line}: {why}") from None
        if not values:
            continue
        if header is None:
            header = [cell.strip() for cell in values]
        else:
            records.append((line, values))
    return header or [], records


def import_companies(
    runtime: Runtime, rows: list[CompanyRow], *, on_row: Callable[[], None] | None = None
) -> ImportReport:
    report = ImportReport()
    for row in rows:
        known = runtime.store.company_by_name(row.name)
        if known is not None:
            report.existing += 1
            if row.website and catalog.change_website(runtime, known["id"], row.website):
                report.moved += 1
        else:
            try:
                catalog.add_company(
                    runtime,
                    name=row.name,
                    website=row.website,
                    importance=row.importance,
                    tier=row.tier,
                )
                report.added += 1
            except CatlasError as exc:
                report.problems.append(f"line {row.line}: {exc}")
        if on_row is not None:
            on_row()
    return report
