"""One change, seen: its row, structured delta and the diff of the two snapshots' text.

`show` reads the change and its two snapshots from the lake and their normalized text
from the archive; `publish_diff` writes the side-by-side HTML diff into the lake
(`diffs/<change id>.html`), where the notifier's and the feed's diff links point.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from catlas_assets.domain.page_diff import side_by_side_html, unified
from catlas_assets.errors import NotFoundError
from catlas_assets.services.runtime import Runtime
from resources.state import site_crawl_store as pages

DIFFS = "diffs"


@dataclass(frozen=True)
class ChangeView:
    change: dict[str, Any]  # the lake row, company_name and url added
    structured_delta: dict[str, Any]
    old_text: str
    new_text: str
    old_label: str
    new_label: str

    @property
    def unified_diff(self) -> str:
        return unified(
            self.old_text, self.new_text, old_label=self.old_label, new_label=self.new_label
        )

    def html(self) -> str:
        c = self.change
        return side_by_side_html(
            self.old_text,
            self.new_text,
            title=f"{c['company_name']} · {c['surface']} · {c['kind']} · {c['url']}",
            old_label=self.old_label,
            new_label=self.new_label,
            summary=str(c["summary"]),
        )


def _one(con: Any, sql: str, params: list[Any]) -> dict[str, Any] | None:
    cursor = con.execute(sql, params)
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cursor.description], row, strict=True))


def show(runtime: Runtime, change_id: str) -> ChangeView:
    con = runtime.lake.connect()
    try:
        change = _one(
            con, "SELECT * EXCLUDE (date, hour) FROM changes WHERE change_id = ?", [change_id]
        )
        if change is None:
            raise NotFoundError(f"no change {change_id!r} in the lake")
        snaps = {
            snapshot_id: _one(
                con,
                "SELECT snapshot_id, version, captured_at, text_key FROM snapshots "
                "WHERE snapshot_id = ?",
                [snapshot_id],
            )
            for snapshot_id in (change["previous_snapshot_id"], change["snapshot_id"])
            if snapshot_id
        }
    finally:
        con.close()
    company = runtime.store.company(int(change["company_id"]))
    change = {**change, "company_name": company["name"], "url": seen_at(runtime, change)}
    old = snaps.get(change["previous_snapshot_id"])
    new = snaps.get(change["snapshot_id"])
    delta = change["structured_delta"]
    return ChangeView(
        change=change,
        structured_delta=json.loads(delta) if isinstance(delta, str) else (delta or {}),
        old_text=_text(runtime, old),
        new_text=_text(runtime, new),
        old_label=_label(old),
        new_label=_label(new),
    )


def seen_at(runtime: Runtime, change: dict[str, Any]) -> str:
    """The URL a change was seen at: its sensor's, or the crawled webpage's."""
    if change.get("webpage_id") is not None:
        return str(pages.page(runtime.store, int(change["webpage_id"]))["url"])
    return str(runtime.store.sensor(int(change["sensor_id"]))["url"])


def _text(runtime: Runtime, snapshot: dict[str, Any] | None) -> str:
    if snapshot is None or not snapshot.get("text_key"):
        return ""
    return runtime.archive.get(snapshot["text_key"]).decode("utf-8", errors="replace")


def _label(snapshot: dict[str, Any] | None) -> str:
    if snapshot is None:
        return "(no snapshot)"
    return f"v{snapshot['version']} {snapshot['snapshot_id']} {snapshot['captured_at']:%Y-%m-%d %H:%M}Z"


def diff_key(change_id: str) -> str:
    return f"{DIFFS}/{change_id}.html"


def diff_link(runtime: Runtime, change_id: str) -> str:
    """Where the change's HTML diff is read: under CATLAS_DIFF_BASE_URL, else in the lake."""
    base = runtime.settings.diff_base_url.rstrip("/")
    key = diff_key(change_id)
    if base:
        return f"{base}/{key}"
    location = runtime.storage.uri(key)
    return location if runtime.storage.is_s3 else f"file://{location}"


def publish_diff(runtime: Runtime, change_id: str) -> str:
    """Write the change's HTML diff into the lake (once) and return its link."""
    key = diff_key(change_id)
    if not runtime.storage.exists(key):
        runtime.storage.write_atomic(key, show(runtime, change_id).html().encode("utf-8"))
    return diff_link(runtime, change_id)
