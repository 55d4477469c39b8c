"""One company's two pages fetched once: the hour the range tests watch."""

from __future__ import annotations

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one

SURFACES = ("pricing", "careers")


def fetch_kestrel_pages(runtime: Runtime) -> None:
    """Kestrel Labs' pricing and careers pages, each fetched once now (2 rows in the hour)."""
    company = catalog.add_company(
        runtime, name="Kestrel Labs", website="http://kestrel-labs.com", tier=1
    )
    for surface in SURFACES:
        sensor = catalog.add_sensor(
            runtime, company_id=company, surface=surface, url=f"http://kestrel-labs.com/{surface}"
        )
        run_one(runtime, sensor, force=True)
