"""The Dagster resource that hands assets and jobs the same Runtime the CLI uses."""

import dagster as dg

from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings


class CatlasRuntime(dg.ConfigurableResource):
    """Settings come from CATLAS_* variables; a field set here overrides its variable."""

    state_dir: str | None = None
    database_url: str | None = None
    lake_url: str | None = None
    s3_endpoint_url: str | None = None
    hosts: str | None = None

    def build(self) -> Runtime:
        overrides = {
            name: value
            for name in ("state_dir", "database_url", "lake_url", "s3_endpoint_url", "hosts")
            if (value := getattr(self, name)) is not None
        }
        return Runtime(Settings.from_env(**overrides))
