"""What a transport hands the fetcher for one request: status, headers and the raw body."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass


@dataclass(slots=True)
class Answer:
    status: int
    headers: dict[str, str]  # lower-cased names; a repeated field's values joined by ", "
    body: AsyncIterator[bytes]  # as it came off the wire, before any content decoding
    close: Callable[[], Awaitable[None]]  # always awaited; before the end it drops the connection
    http_version: str  # "HTTP/1.1" or "HTTP/2"


def header_dict(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Raw header fields as text, read as httpx reads them: every field as ASCII when all
    are, else as UTF-8 when all are, else as Latin-1 (which decodes any byte)."""
    fields = list(raw)
    encoding = _encoding(fields)
    out: dict[str, str] = {}
    for name, value in fields:
        key = name.decode(encoding).lower()
        text = value.decode(encoding)
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


def _encoding(fields: list[tuple[bytes, bytes]]) -> str:
    if all(name.isascii() and value.isascii() for name, value in fields):
        return "ascii"
    try:
        for name, value in fields:
            name.decode("utf-8")
            value.decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"
    return "utf-8"
