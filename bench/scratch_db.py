"""A throwaway PostgreSQL database for one benchmark: created empty, dropped at the end.

The server is `CATLAS_BENCH_PG_ADMIN_URL` (a database URL to connect to for CREATE and
DROP; the local trust-auth server by default).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

import psycopg
from sqlalchemy.engine import make_url

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass(frozen=True)
class ScratchDatabase:
    admin_url: str
    name: str

    @classmethod
    def create(cls) -> ScratchDatabase:
        admin_url = os.environ.get("CATLAS_BENCH_PG_ADMIN_URL", DEFAULT_ADMIN_URL)
        db = cls(admin_url, f"catlas_bench_{secrets.token_hex(4)}")
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{db.name}"')
        return db

    def url(self, driver: str = "postgresql+psycopg") -> str:
        """The database's URL with `driver` (plain `postgresql` for psycopg itself)."""
        url = make_url(self.admin_url).set(drivername=driver, database=self.name)
        return url.render_as_string(hide_password=False)

    def drop(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
