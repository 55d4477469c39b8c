"""The change feed: an Atom 1.0 document of the lake's changes, for feed readers.

One entry per change of the chosen kind or above (meaningful by default), newest first,
at most `limit`; entry ids are the change ids, so a refreshed feed never repeats an entry
under a new id. The daily Dagster asset writes it into the lake (`feeds/changes.atom`).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain import atom_feed
from catlas_assets.domain.vocabulary import ChangeKind
from catlas_assets.services.catalog import resolve_company
from catlas_assets.services.change_view import diff_key, diff_link, publish_diff, seen_at
from catlas_assets.services.runtime import Runtime

FEED_KEY = "feeds/changes.atom"
KINDS = [k.value for k in ChangeKind]


@dataclass(frozen=True)
class Feed:
    document: bytes
    entries: int


def build_feed(
    runtime: Runtime,
    *,
    company: str | None = None,
    kind: str = "meaningful",
    limit: int = 200,
    publish: bool = False,
) -> Feed:
    """The feed; with `publish`, each entry's HTML diff is written into the lake first (else
    an entry links a diff only when one was published, by the notifier or the daily job)."""
    kinds = KINDS[KINDS.index(kind) :]
    company_row = resolve_company(runtime, company) if company else None
    names = {c["id"]: c["name"] for c in runtime.store.list_companies()}
    urls = {s["id"]: s["url"] for s in runtime.store.list_sensors()}
    con = runtime.lake.connect()
    try:
        where = "kind IN (SELECT unnest(?))"
        params: list[object] = [kinds]
        if company_row is not None:
            where += " AND company_id = ?"
            params.append(company_row["id"])
        cursor = con.execute(
            "SELECT change_id, company_id, sensor_id, webpage_id, surface, kind, summary, "
            "detected_at "
            f"FROM changes WHERE {where} ORDER BY detected_at DESC, change_id DESC LIMIT {int(limit)}",
            params,
        )
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, r, strict=True)) for r in cursor.fetchall()]
    finally:
        con.close()
    entries = [
        {
            **row,
            "company_name": names.get(row["company_id"], str(row["company_id"])),
            "url": urls.get(row["sensor_id"])
            if row["webpage_id"] is None
            else seen_at(runtime, row),
            "diff_url": _diff_url(runtime, row["change_id"], publish),
        }
        for row in rows
    ]
    scope = f"company:{company_row['id']}" if company_row else "all"
    title = f"catlas changes ({kind} or above)" + (
        f" · {company_row['name']}" if company_row else ""
    )
    document = atom_feed.build(
        entries,
        feed_id=f"urn:catlas:feed:{scope}:{kind}",
        title=title,
        updated=runtime.clock.now(),
    )
    return Feed(document, len(entries))


def _diff_url(runtime: Runtime, change_id: str, publish: bool) -> str | None:
    if publish:
        return publish_diff(runtime, change_id)
    return diff_link(runtime, change_id) if runtime.storage.exists(diff_key(change_id)) else None


def refresh_lake_feed(runtime: Runtime) -> Feed:
    """The daily refresh: every company's meaningful-or-above changes, into the lake."""
    feed = build_feed(runtime, publish=True)
    runtime.storage.write_atomic(FEED_KEY, feed.document)
    return feed
