"""Fixtures for the lake tests: a local lake on disk and a real S3-compatible server.

The S3 server is moto's threaded server on 127.0.0.1 (a real HTTP endpoint that boto3,
s3fs and DuckDB through s3fs all talk to). Each test gets its own bucket, so tests never
see each other's objects.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from resources.archive import ObjectArchive
from resources.lake import Lake
from resources.state.archive_index import ArchiveIndex
from resources.state.store import StateStore
from resources.storage import Storage

AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a local S3-compatible server, with test credentials in the environment."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in AWS_ENV.items():
            patch.setenv(name, value)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            yield f"http://{host}:{port}"
        finally:
            server.stop()


@pytest.fixture
def s3_client(s3_endpoint: str) -> Any:
    """A plain boto3 client: looks at the bucket without going through catlas code."""
    return boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name=AWS_ENV["AWS_DEFAULT_REGION"],
        aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.fixture
def s3_bucket(s3_client: Any) -> str:
    """A new, empty bucket for this test."""
    name = f"catlas-{secrets.token_hex(6)}"
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def lake_root(tmp_path: Path) -> Path:
    return tmp_path / "lake"


@pytest.fixture
def local_storage(lake_root: Path) -> Storage:
    return Storage(str(lake_root))


@pytest.fixture
def local_lake(local_storage: Storage) -> Lake:
    return Lake(local_storage)


@pytest.fixture
def archive_index(tmp_path: Path) -> Iterator[ArchiveIndex]:
    """The index of packed objects in a real SQLite state store."""
    store = StateStore.open(f"sqlite:///{tmp_path / 'state.db'}")
    yield ArchiveIndex(store)
    store.close()


@pytest.fixture
def local_archive(local_storage: Storage, archive_index: ArchiveIndex) -> ObjectArchive:
    return ObjectArchive(local_storage, archive_index)


def bucket_keys(client: Any, bucket: str, prefix: str = "") -> list[str]:
    """Every key under ``prefix`` in ``bucket``, listed with boto3 (not through catlas)."""
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(item["Key"] for item in page.get("Contents", []))
    return sorted(keys)


@pytest.fixture
def list_bucket(s3_client: Any) -> Any:
    def list_keys(bucket: str, prefix: str = "") -> list[str]:
        return bucket_keys(s3_client, bucket, prefix)

    return list_keys
