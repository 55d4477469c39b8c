"""Site-crawl fixtures: a runtime on each backend, the Inkwell config and its sibling."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from catlas_assets.services.crawl_configs import add_config
from catlas_assets.services.site_crawl import CrawlRequest, SiteCrawlResult, prepare, run_site_crawl
from tests.conftest import Sim

INKWELL = "http://inkwell-press.com"
QUILL = "http://quillpress.com"

Crawl = Callable[..., SiteCrawlResult]


@pytest.fixture
def crawl_sim(sim: Sim) -> Sim:
    add_config(sim.runtime, "inkwell", company="Inkwell Press", base_url=f"{INKWELL}/blog")
    add_config(sim.runtime, "quill", company="Quill Press", base_url=f"{QUILL}/")
    return sim


@pytest.fixture
def crawl(crawl_sim: Sim) -> Crawl:
    def run(mode: str, config: str = "inkwell", **inputs: str) -> SiteCrawlResult:
        prepared = prepare(crawl_sim.runtime, CrawlRequest(config, mode, **inputs))
        return run_site_crawl(crawl_sim.runtime, prepared)

    return run


def next_day(sim: Sim) -> None:
    sim.advance(timedelta(days=1))
