"""What a company name may be: the state store keeps up to 300 characters of one line."""

from __future__ import annotations

from catlas_assets.errors import CatlasError

MAX_COMPANY_NAME = 300  # companies.name is VARCHAR(300) on PostgreSQL


def checked_company_name(name: str) -> str:
    """`name` without its outer blanks, or a CatlasError saying why it cannot be stored."""
    name = name.strip()
    if not name:
        raise CatlasError("a company needs a name")
    if len(name) > MAX_COMPANY_NAME:
        raise CatlasError(
            f"a company name is at most {MAX_COMPANY_NAME} characters ({len(name)} given)"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        # PostgreSQL refuses NUL in text; a line break would split the name in every listing.
        raise CatlasError("a company name cannot hold control characters (NUL, line breaks)")
    return name
