"""The URL a request goes to: httpx's parse of it, or an equal one found more cheaply.

httpx parses and normalises a URL (lower-cased host, default port dropped, dot segments
removed, characters outside the URL grammar percent-encoded) and refuses a malformed one.
That parse was about a tenth of a 304's CPU. Most URLs a tick sends are already in the
form httpx would give them: an http(s) scheme, a lower-case name with no IDNA label, no
default port, no dot segment, no fragment and only characters httpx keeps as they are.
For those the text is the request URL unchanged; every other URL goes through httpx, so
its normalisation and its errors (`httpx.InvalidURL`) stay the one rule.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}

# Each part matches only text httpx leaves unchanged (tests/fetching/test_request_url.py
# holds the two parses equal over generated URLs).
_PLAIN = re.compile(
    r"(https?)://"
    r"([a-z0-9_-]+(?:\.[a-z0-9_-]+)*)"  # a lower-case name; IPv4 look-alikes are sent on
    r"(?::([1-9][0-9]{0,4}))?"
    r"(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?"
    r"(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?"
)


class RequestURL(NamedTuple):  # a tuple: built for every request, at a tuple's cost
    scheme: str
    host: str
    port: int | None  # None: the scheme's default
    text: str  # the URL as sent, in httpx's normal form


def request_url(url: str) -> RequestURL:
    """`url` as a request sends it; raises `httpx.InvalidURL` for a malformed one."""
    return _plain(url) or _parsed(httpx.URL(url))


def _plain(url: str) -> RequestURL | None:
    match = _PLAIN.fullmatch(url)
    if match is None:
        return None
    scheme, host, port_text, path, _query = match.groups()
    if host[host.rfind(".") + 1].isdigit() or "xn--" in host:
        return None  # an IPv4 address or an IDNA name: httpx validates those
    if path and "/." in path:
        return None  # perhaps a dot segment, which httpx removes
    if port_text is None:
        return RequestURL(scheme, host, None, url)
    port = int(port_text)
    if port > 65535 or port == DEFAULT_PORTS[scheme]:
        return None
    return RequestURL(scheme, host, port, url)


def _parsed(url: httpx.URL) -> RequestURL:
    return RequestURL(url.scheme, url.host, url.port, str(url))
