"""What one UTC day of the `discovery` table holds: the figures of that day's batches."""

from __future__ import annotations

from datetime import date

from catlas_assets.services.runtime import Runtime


def day_figures(runtime: Runtime, day: date) -> dict[str, int]:
    """Rows, batches (runs), companies and selected candidates of one day (0 when none)."""
    empty = {"rows": 0, "batches": 0, "companies": 0, "selected": 0, "verified": 0}
    if not runtime.lake.files("discovery"):
        return empty
    con = runtime.lake.connect()
    try:
        row = con.execute(
            "SELECT count(*), count(DISTINCT run_id), count(DISTINCT company_id), "
            "count(*) FILTER (WHERE selected), count(*) FILTER (WHERE verified) "
            "FROM discovery WHERE date = ?",
            [day],
        ).fetchone()
    finally:
        con.close()
    return dict(zip(empty, row, strict=True)) if row else empty
