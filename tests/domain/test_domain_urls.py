"""URL checks and registrable domains from the bundled public suffix list."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.extract.html import _canonical, canonical_url
from catlas_assets.domain.extract.links import plain_link, resolve
from catlas_assets.domain.urls import (
    BadURL,
    check_url,
    host_of,
    normalize_website,
    registrable_domain,
)
from catlas_assets.errors import CatlasError


@pytest.mark.parametrize(
    "url",
    [
        "https://acme.test/careers",
        "http://acme.test",
        "https://acme.test:8443/x?q=1",
        " http://a.b/ ",
    ],
)
def test_absolute_http_urls_pass_trimmed(url: str) -> None:
    assert check_url(url) == url.strip()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://acme.test/file", "http or https"),
        ("javascript:alert(1)", "http or https"),
        ("mailto:jobs@acme.test", "http or https"),
        ("acme.test/careers", "http or https"),
        ("http://", "no host"),
        ("https:///path", "no host"),
        ("http://acme.test:99999/", "malformed"),
        ("http://acme.test:port/", "malformed"),
        ("http://acme.test:0/", "port 0"),
    ],
)
def test_bad_urls_are_refused_with_the_reason(url: str, why: str) -> None:
    with pytest.raises(BadURL, match=why):
        check_url(url)


def test_bad_url_is_a_catlas_error() -> None:
    assert issubclass(BadURL, CatlasError)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("www.shop.example.co.uk", "example.co.uk"),
        ("https://careers.example.co.uk/jobs", "example.co.uk"),
        ("https://jobs.acme.com/x", "acme.com"),
        ("blog.example.com.au", "example.com.au"),
        ("WWW.Example.ORG", "example.org"),
        ("boards.greenhouse.io", "greenhouse.io"),
        ("localhost", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_registrable_domain_follows_the_public_suffix_list(given: str, expected: str) -> None:
    assert registrable_domain(given) == expected


def test_host_of_lowercases_and_drops_port_and_credentials() -> None:
    assert host_of("https://user:pw@Jobs.ACME.test:8443/p") == "jobs.acme.test"
    assert host_of("not a url") == ""


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("acme.com", "https://acme.com"),
        ("  Acme.COM/ ", "https://acme.com"),
        ("www.acme.com", "https://www.acme.com"),
        ("acme.com/en/", "https://acme.com/en"),
        ("//acme.com/", "https://acme.com"),
        ("HTTPS://ACME.com/en?utm_source=x#top", "https://acme.com/en"),
        ("http://acme.com", "http://acme.com"),
        ("acme.com:8080/", "https://acme.com:8080"),
        ("bücher.de", "https://xn--bcher-kva.de"),
        ("https://Müller-Bau.AT/", "https://xn--mller-bau-q9a.at"),
        ("acme.com.", "https://acme.com"),
    ],
)
def test_websites_as_people_write_them_normalize_to_one_canonical_url(
    given: str, canonical: str
) -> None:
    assert normalize_website(given) == canonical


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("", "empty"),
        ("mailto:jobs@acme.com", "http or https"),
        ("ftp://acme.com", "http or https"),
        ("acme .com", "not a valid name"),
        ("https://", "no host"),
    ],
)
def test_websites_that_are_no_website_are_refused(given: str, why: str) -> None:
    with pytest.raises(BadURL, match=why):
        normalize_website(given)


_BASES = [
    "http://a.test/x/y", "https://A.test:8080/p?q=1#f", "http://a.test", "HTTP://b.test/dir/",
    "http://[::1", "mailto:x@y", "http://h/a;p?x", "/rel/only", "ftp://f/x",
]  # fmt: skip
_PIECES = ["/", "//", "a", "..", ".", "?", "#", "=", "&", "utm_x", "v", "\t", "\n", ";", " ", "%2F",
           "[", "]", ":", "B"]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["/", " /", "//", "/\t/", "/\n", "/a", "", "a/"]),
    st.lists(st.sampled_from(_PIECES), max_size=6).map("".join),
    st.sampled_from(_BASES),
)
def test_links_remembered_per_origin_resolve_as_against_the_page(
    start: str, rest: str, base: str
) -> None:
    href = start + rest
    assert canonical_url(href, base) == _canonical(href, base)
    assert canonical_url(href, base) == _canonical(href, base)  # once more, remembered


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["/", " /", "//", "/\t/", "/\n", "/a", "", "a/", "/ "]),
    st.lists(st.sampled_from(_PIECES), max_size=6).map("".join),
    st.sampled_from([*_BASES, ""]),
)
def test_links_resolved_per_origin_are_the_plain_join(start: str, rest: str, base: str) -> None:
    href = start + rest
    try:
        expected = urljoin(base, href)
    except ValueError:
        with pytest.raises(ValueError):
            resolve(base, href)
        return
    assert resolve(base, href) == expected
    assert resolve(base, href) == expected  # once more, remembered


_PLAIN_BASES = [
    *_BASES, "https://u:P@Host.Test:80/a", "https://[::1]:8/x", "http://ÄB.test/x", "foo://h/x",
]  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet="/aZ09._~%!$&'()*+,=@-;:?#[] \t\nİ", max_size=12).map("/{}".format),
    st.sampled_from(_PLAIN_BASES),
)
def test_plain_root_paths_written_out_are_what_urljoin_makes(href: str, base: str) -> None:
    # Paths of plain segments skip the parse; the answer is the parsed one.
    assert canonical_url(href, base) == _canonical(href, base)
    try:
        expected = urljoin(base, href)
    except ValueError:
        return
    assert resolve(base, href) == expected


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet="/aZ09._~%!$&'()*+,=@-;:?#[] \t\nİ", max_size=12).map("/{}".format),
    st.sampled_from(_PLAIN_BASES),
)
def test_a_plain_link_splits_into_the_page_host_and_itself(href: str, base: str) -> None:
    url = plain_link(base, href)
    if url is None:
        return
    assert url == resolve(base, href)
    parts, page = urlsplit(url), urlsplit(base)
    assert (parts.hostname, parts.path) == (page.hostname, href)
