"""Every lake key resolves: an observation's object key names bytes that are in the archive,
also when a page's bytes change only in what normalization drops (a script nonce)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.services import catalog, lake_checks
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

HOST = "nonce-pages.com"
PAGE = '<html><head><script nonce="{nonce}">var n = "{nonce}";</script></head><body>{body}</body>'


def _site(root: Path) -> Path:
    site = root / HOST
    site.mkdir(parents=True)
    body = "<h1>Products</h1><p>The one product.</p>"
    for day, nonce in ((0, "a1b2c3"), (1, "d4e5f6"), (2, "g7h8i9")):
        name = "products.html" if day == 0 else f"products.d{day:02d}.html"
        (site / name).write_text(PAGE.format(nonce=nonce, body=body))
    return root


def test_an_unchanged_page_with_new_bytes_names_archived_bytes(
    tmp_path: Path, database_url: str
) -> None:
    with FixtureWeb(root=_site(tmp_path / "web")) as web:
        settings = Settings(
            state_dir=str(tmp_path / "state"),
            database_url=database_url,
            hosts=str(web.write_hosts_file(tmp_path / "hosts")),
            fetch_retries=0,
            domain_spacing_s=0.0,
            full_refetch_interval_s=60,  # every fetch is a full one: no 304 shortcut
        )
        runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(3))
        try:
            company = catalog.add_company(runtime, name="Nonce", website=f"http://{HOST}")
            catalog.add_sensor(
                runtime, company_id=company, surface="products", url=f"http://{HOST}/products"
            )
            outcomes = []
            for day in range(3):
                web.set_day(day)
                runtime.clock.set(web.now + timedelta(hours=12))  # type: ignore[attr-defined]
                outcomes += [r.outcome for r in run_tick(runtime).runs]
            assert outcomes[0] is Outcome.OK
            assert Outcome.UNCHANGED in outcomes[1:]
            keys = lake_checks.object_keys(runtime.lake)
            assert len(keys) >= 3  # the raw bytes of each day, the text and blocks
            assert lake_checks.dangling_keys(runtime.lake, runtime.archive) == []
        finally:
            runtime.close()
