"""Read model of the review queue: what needs a person (`catlas review list`)."""

from __future__ import annotations

from typing import Any

from catlas_assets.services.runtime import Runtime


def list_review(
    runtime: Runtime, *, kind: str | None = None, status: str | None = "open"
) -> list[dict[str, Any]]:
    """Review items oldest first; `status=None` lists every status."""
    return runtime.store.list_review(kind=kind, status=status)
