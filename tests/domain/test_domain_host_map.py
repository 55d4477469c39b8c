"""The host map (like curl --resolve): parsed strictly, and the only names that resolve."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from catlas_assets.errors import ConfigError
from resources.resolver import Destination, HostMap, ResolutionError, Resolver

GOOD = """\
# fixture web
127.0.0.1:8080 acme.test www.acme.test

127.0.0.1:8081   careers.globex.test   # trailing comment
[::1]:9000 V6.Example.TEST.
"""


def test_good_lines_comments_and_several_hosts_per_line_are_read() -> None:
    entries = HostMap.parse(GOOD).entries
    assert entries == {
        "acme.test": ("127.0.0.1", 8080),
        "www.acme.test": ("127.0.0.1", 8080),
        "careers.globex.test": ("127.0.0.1", 8081),
        "v6.example.test": ("::1", 9000),
    }


def test_an_empty_or_comment_only_map_has_no_entries() -> None:
    assert HostMap.parse("").entries == {}
    assert HostMap.parse("# nothing\n\n   # still nothing\n").entries == {}


@pytest.mark.parametrize(
    "bad",
    [
        "127.0.0.1 acme.test",  # missing port
        "127.0.0.1: acme.test",  # empty port
        "127.0.0.1:http acme.test",  # port is not a number
        "127.0.0.1:-1 acme.test",
        "127.0.0.1:0 acme.test",  # out of range
        "127.0.0.1:65536 acme.test",
        "127.0.0.1:8080",  # no host
        ":8080 acme.test",  # no address
        "::1 acme.test",  # IPv6 without brackets or port
        "::1:8080 acme.test",  # IPv6 without brackets: address and port are ambiguous
    ],
)
def test_a_malformed_line_names_its_line_number(bad: str) -> None:
    text = f"# header\n127.0.0.1:80 fine.test\n{bad}\n127.0.0.1:81 after.test\n"
    with pytest.raises(ConfigError, match=r"hosts line 3\b"):
        HostMap.parse(text, source="hosts")


def test_load_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("127.0.0.1:80 ok.test\n127.0.0.1 broken.test\n")
    with pytest.raises(ConfigError, match=rf"CATLAS_HOSTS {path} line 2"):
        HostMap.load(str(path))


def test_load_of_a_missing_file_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="CATLAS_HOSTS"):
        HostMap.load(str(tmp_path / "absent"))


def _resolve(resolver: Resolver, host: str, port: int = 80) -> Destination:
    return asyncio.run(resolver.resolve(host, port))


def test_a_host_missing_from_the_map_does_not_resolve() -> None:
    resolver = Resolver(HostMap.parse(GOOD))
    with pytest.raises(ResolutionError, match=r"globex\.test"):
        _resolve(resolver, "globex.test")  # a parent of a listed name is not listed


def test_a_listed_host_resolves_to_its_trusted_mapped_address() -> None:
    resolver = Resolver(HostMap.parse(GOOD))
    assert _resolve(resolver, "WWW.Acme.Test.", 443) == Destination("127.0.0.1", 8080, True)
    assert _resolve(resolver, "v6.example.test") == Destination("::1", 9000, True)
