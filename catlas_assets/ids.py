"""Sortable unique ids for runs and lake rows, and ids derived from them.

An id is ``<prefix>_<ms since epoch, 12 hex><per-process sequence, 6 hex><random, 6 hex>``:
it sorts by creation time, and within one process by creation order even under a frozen
virtual clock. Derived ids (a snapshot from its observation) are deterministic so that
re-deriving from stored bytes reproduces them.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import threading
from datetime import datetime

from catlas_assets.errors import CatlasError

# The widest integer both SQLite INTEGER and PostgreSQL BIGINT hold: a state row id.
INT64_MAX = 2**63 - 1

_sequence = itertools.count()
_lock = threading.Lock()


def new_id(prefix: str, now: datetime) -> str:
    with _lock:
        seq = next(_sequence) & 0xFFFFFF
    ms = int(now.timestamp() * 1000)
    return f"{prefix}_{ms:012x}{seq:06x}{secrets.token_hex(3)}"


def derived_id(prefix: str, source_id: str) -> str:
    digest = hashlib.sha256(f"{prefix}:{source_id}".encode()).hexdigest()[:24]
    return f"{prefix}_{digest}"


def row_id(ref: str, what: str) -> int | None:
    """The state row id `ref` spells (ASCII digits only: `²` or `٣` are names), else None.

    An id no table can hold is refused here, before it reaches a database.
    """
    if not (ref.isascii() and ref.isdigit()):
        return None
    number = int(ref)
    if not 1 <= number <= INT64_MAX:
        raise CatlasError(f"{ref!r} is not a {what} id (1 to {INT64_MAX})")
    return number
