"""ConfigScope and PathScope (spec 003), on plain inputs."""

from __future__ import annotations

import pytest

from catlas_assets.domain.crawl_scope import (
    ConfigScope,
    CrawlScope,
    PathScope,
    default_allowed_domains,
)
from catlas_assets.errors import CrawlScopeError

BASE = "https://www.inkwell.com/"


@pytest.mark.parametrize(
    ("url", "inside"),
    [
        ("https://inkwell.com/news", True),
        ("https://www.inkwell.com/news/x", True),
        ("https://blog.inkwell.com/news?page=2", True),
        ("https://inkwell.com/news/", True),
        ("https://inkwell.com/news#top", True),
        ("https://inkwell.com/newsroom", False),
        ("https://inkwell.com/newsroom/a", False),
        ("https://inkwell.com/foo/news/bar", False),
        ("https://other.com/news", False),
        ("https://notinkwell.com/news", False),
        ("https://inkwell.com.evil.com/news", False),
    ],
)
def test_path_scope_examples_of_the_spec(url: str, inside: bool) -> None:
    assert PathScope("/news", BASE).matches(url) is inside


def test_a_slash_scopes_to_the_whole_domain_family() -> None:
    scope = PathScope("/", BASE)
    assert scope.matches("https://inkwell.com/")
    assert scope.matches("https://docs.inkwell.com/a/b?c=1")
    assert scope.matches("https://inkwell.com")
    assert not scope.matches("https://quillpress.com/")


@pytest.mark.parametrize("path", ["", "   "])
def test_an_empty_path_raises(path: str) -> None:
    with pytest.raises(CrawlScopeError):
        PathScope(path, BASE)


def test_the_seed_joins_base_url_and_path_and_a_pasted_url_fails_loudly() -> None:
    assert PathScope("/news", BASE).seed() == "https://www.inkwell.com/news"
    assert PathScope("news/", BASE).seed() == "https://www.inkwell.com/news/"
    with pytest.raises(CrawlScopeError):
        PathScope("https://www.inkwell.com/news", BASE).seed()


def test_config_scope_has_one_predicate_over_the_authority() -> None:
    scope = ConfigScope(tuple(default_allowed_domains(BASE)))
    assert scope.is_allowed_domain("inkwell.com")
    assert scope.is_allowed_domain("docs.inkwell.com:8080")
    assert scope.is_allowed_domain("user:pw@inkwell.com")
    assert not scope.is_allowed_domain("quillpress.com")
    assert not scope.is_allowed_domain("inkwell.com.evil.com")
    assert not scope.is_allowed_domain("")
    assert not scope.is_allowed_domain(None)
    hosts = [None, "inkwell.com", "quillpress.com", "blog.inkwell.com", "inkwell.com"]
    assert scope.hosts_in(hosts) == ["blog.inkwell.com", "inkwell.com"]


def test_scopes_intersect() -> None:
    narrow = ConfigScope((r"^www\.inkwell\.com$",))
    scope = CrawlScope(narrow, PathScope("/news", BASE))
    assert scope.allows("https://www.inkwell.com/news/a")
    assert not scope.allows("https://blog.inkwell.com/news/a")  # path family, not config
    assert not scope.allows("https://www.inkwell.com/docs")  # config, not path
    with pytest.raises(CrawlScopeError):
        scope.require("https://blog.inkwell.com/news/a")
