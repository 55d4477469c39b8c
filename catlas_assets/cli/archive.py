"""`catlas archive get KEY`: an archived object's bytes, wherever the archive keeps them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from catlas_assets.cli.app import Context, cli, pass_context
from catlas_assets.errors import NotFoundError

# The keys lake rows name (`domain.content_address.key_for_digest`).
_KEY = re.compile(r"objects/([0-9a-f]{2})/([0-9a-f]{2})/\1\2[0-9a-f]{60}\.zst")


@cli.group()
def archive() -> None:
    """The object archive: raw bytes, text, blocks and extractions, by key."""


@archive.command("get")
@click.argument("key")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the object to FILE instead of stdout.",
)
@pass_context
def archive_get(obj: Context, key: str, output: Path | None) -> None:
    """Write the object KEY (as `observations.object_key` and the other key columns name
    it), uncompressed, whether it lies in a pack or in a file of its own."""
    if not _KEY.fullmatch(key):
        raise click.BadParameter(
            f"{key!r} is not an archive key (objects/ab/cd/<sha256>.zst)", param_hint="KEY"
        )
    archive = obj.runtime.archive
    if not archive.exists(key):
        raise NotFoundError(f"{key} is not in the archive at {obj.runtime.storage.url}")
    data = archive.get(key)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        output.write_bytes(data)
