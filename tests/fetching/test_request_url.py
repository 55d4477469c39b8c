"""The request URL and the answer's headers are what httpx would make of them, found faster.

`request_url` skips httpx's parse for URLs already in httpx's normal form; `header_dict`
reads raw header bytes without building `httpx.Headers`. Both are held equal to httpx over
generated input, so a gap in either cheap path shows here, not on a site.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resources.answer import header_dict
from resources.request_url import RequestURL, _plain, request_url


def _by_httpx(url: str) -> RequestURL:
    parsed = httpx.URL(url)
    return RequestURL(parsed.scheme, parsed.host, parsed.port, str(parsed))


# Text near the fast path's edges: dot segments, escapes, default and odd ports, case,
# IDNA and IPv4 look-alikes, fragments, spaces and characters httpx percent-encodes.
_PIECES = st.sampled_from(
    ["a", "Z", "0", "9", "-", "_", ".", "..", "/", "//", "/.", "/..", "%", "%4", "%41", "%zz",
     "?", "#", "&", "=", ";", ":", "@", "!", "$", "'", "(", ")", "*", "+", ",", "~", " ",
     "é", "[", "]", "|", "^", "`", "{", "\\", '"', "<", "\t", "\x00"]
)  # fmt: skip
_HOSTS = st.sampled_from(
    ["acme.test", "ACME.test", "a-b_c.example.com", "xn--bcher-kva.test", "10.0.0.1",
     "999.1.1.1", "1.test", "a.1b", "acme.test.", "-acme.test", "a..test", "localhost",
     "0177.0.0.1", "0x7f.1", "127.1", "2130706433", "0x7f000001", "a.0x7f", "[::1]"]
)  # fmt: skip
_PORTS = st.sampled_from(["", ":80", ":443", ":8080", ":080", ":0", ":65535", ":65536", ":99999"])


@st.composite
def _urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "ftp"]))
    rest = "".join(draw(st.lists(_PIECES, max_size=12)))
    return f"{scheme}://{draw(_HOSTS)}{draw(_PORTS)}{draw(st.sampled_from(['', '/']))}{rest}"


@settings(max_examples=3000, deadline=None)
@given(_urls())
@example("http://acme.test/a/./b")
@example("http://acme.test:80/x")
@example("http://acme.test/x/..")
@example("https://acme.test/jobs?page=2&team=eng%20ops")
def test_the_fast_path_gives_what_httpx_gives_whenever_it_answers(url: str) -> None:
    fast = _plain(url)
    if fast is None:
        return  # httpx parses it, which is the definition this test holds the fast path to
    assert fast == _by_httpx(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://acme.test/",
        "http://acme.test",
        "https://www.acme-robotics.com/careers/engineering?page=2&sort=new",
        "http://acme.test:8080/blog/2026/12/a-post-title",
        "https://boards.greenhouse.io/acme/jobs/4012345",
        "http://acme.test/search?q=caf%C3%A9&x=(1)",
    ],
)
def test_the_urls_a_tick_sends_take_the_fast_path(url: str) -> None:
    assert _plain(url) == _by_httpx(url)


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("http://ACME.test/x", "http://acme.test/x"),
        ("http://acme.test:80/x", "http://acme.test/x"),
        ("http://acme.test/a/./b/../c", "http://acme.test/a/c"),
        ("http://acme.test/a b", "http://acme.test/a%20b"),
        ("https://acme.test/caf\u00e9", "https://acme.test/caf%C3%A9"),
    ],
)
def test_every_other_url_is_normalised_by_httpx(url: str, sent: str) -> None:
    assert _plain(url) is None
    assert request_url(url).text == sent


@pytest.mark.parametrize("url", ["http://999.1.1.1/", "http://acme.test:x/", "http://[::1/"])
def test_a_malformed_url_raises_httpx_s_error(url: str) -> None:
    with pytest.raises(httpx.InvalidURL):
        request_url(url)


_NAMES = st.sampled_from([b"ETag", b"etag", b"Set-Cookie", b"Location", b"X-Note", b"Vary"])
_VALUES = st.binary(max_size=12) | st.sampled_from(['"abc"', 'W/"caf\u00e9"', "a, b", ""]).map(
    lambda text: text.encode("utf-8")
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(_NAMES, _VALUES), max_size=6))
@example([(b"ETag", '"caf\u00e9"'.encode()), (b"X-Note", b"\xff")])  # Latin-1 for all
@example([(b"Vary", b"Accept"), (b"vary", b"Cookie")])  # repeated: joined by ", "
def test_headers_are_read_as_httpx_reads_them(raw: list[tuple[bytes, bytes]]) -> None:
    assert header_dict(raw) == {k.lower(): v for k, v in httpx.Headers(raw).items()}
