"""Fixtures for the fixture web's own tests: a real server, reached over real HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from fixture_web import DEFAULT_NOW, FixtureWeb


class SiteClient:
    """An HTTP client that talks to the fixture web at 127.0.0.1 with a chosen Host header."""

    def __init__(self, web: FixtureWeb) -> None:
        self.web = web
        self.http = httpx.Client(base_url=f"http://{web.address}", timeout=10)

    def request(
        self, method: str, host: str, path: str, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return self.http.request(method, path, headers={"Host": host, **(headers or {})})

    def get(self, host: str, path: str, **headers: str) -> httpx.Response:
        return self.request("GET", host, path, _header_names(headers))

    def head(self, host: str, path: str, **headers: str) -> httpx.Response:
        return self.request("HEAD", host, path, _header_names(headers))

    def on_day(self, day: int, host: str, path: str) -> httpx.Response:
        self.web.set_day(day)
        return self.get(host, path)

    def close(self) -> None:
        self.http.close()


def _header_names(headers: dict[str, str]) -> dict[str, str]:
    # if_none_match="..." -> If-None-Match: ...
    return {name.replace("_", "-").title(): value for name, value in headers.items()}


@pytest.fixture(scope="session")
def _shared_web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as web:
        yield web


@pytest.fixture
def web(_shared_web: FixtureWeb) -> FixtureWeb:
    """The fixture web over `fixtures/web`, clock at its default and log empty."""
    _shared_web.set_now(DEFAULT_NOW)
    _shared_web.clear_requests()
    return _shared_web


@pytest.fixture
def client(web: FixtureWeb) -> Iterator[SiteClient]:
    site_client = SiteClient(web)
    yield site_client
    site_client.close()


@pytest.fixture
def make_web(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], SiteClient]]:
    """Start a fixture web over files given as {"host/relative/path": text}."""
    started: list[tuple[FixtureWeb, SiteClient]] = []

    def make(files: dict[str, str]) -> SiteClient:
        root = tmp_path / f"web{len(started)}"
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        web = FixtureWeb(root).start()
        site_client = SiteClient(web)
        started.append((web, site_client))
        return site_client

    yield make
    for web, site_client in started:
        site_client.close()
        web.stop()
