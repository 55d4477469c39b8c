"""Values as they are stored as JSON (in the state store, in the lake's JSON columns).

PostgreSQL refuses a NUL character in text and JSON, and a page may well carry one, so
no stored string has one (SQLite and the lake are given the same data); instants are
ISO-8601 text and bytes are decoded.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def without_nul(value: Any) -> Any:
    """`value` with NUL characters removed from every string in it."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """`json.dumps`'s `default`: what JSON has no type for, as JSON stores it."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"cannot store {type(value).__name__} as JSON")
