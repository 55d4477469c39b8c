"""The Dagster resources: catlas's runtime for the length of a run, and the adapters an
asset needs, named, chosen per deployment (`CATLAS_ENV`) from one mapping.

`catlas` builds one `Runtime` when a run (or a sensor evaluation) starts and closes it
when it ends, so all the steps of a run share one state store pool and one schema check.
`state_store`, `lake`, `archive` and `notifier` hand out that runtime's adapters by name.
Sensors read through `CatlasResource.reading()` (services/state_view.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from catlas_assets.errors import CatlasError
from catlas_assets.services.runtime import Lake, ObjectArchive, Runtime, StateStore, WebhookNotifier
from catlas_assets.services.state_view import StateView
from catlas_assets.settings import Env, Settings, check_prod, current_env

_OVERRIDABLE = ("state_dir", "database_url", "lake_url", "s3_endpoint_url", "hosts")


class CatlasResource(dg.ConfigurableResource):
    """Settings come from CATLAS_* variables; a field set here overrides its variable.

    `prod` is the production contract (`settings.check_prod`): state in PostgreSQL, lake on
    S3, and a run never creates the schema (`catlas db upgrade` does, once, by hand).
    """

    state_dir: str | None = None
    database_url: str | None = None
    lake_url: str | None = None
    s3_endpoint_url: str | None = None
    hosts: str | None = None
    prod: bool = False

    _runtime: Runtime | None = PrivateAttr(default=None)

    def settings(self) -> Settings:
        overrides = {
            name: value for name in _OVERRIDABLE if (value := getattr(self, name)) is not None
        }
        settings = Settings.from_env(**overrides)
        if self.prod:
            check_prod(settings)
        return settings

    def build(self) -> Runtime:
        """A new runtime on these settings; whoever builds it closes it."""
        return Runtime(self.settings(), auto_create_schema=not self.prod)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # Nothing is opened here: the runtime opens each adapter on first use.
        self._runtime = self.build()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None

    @property
    def runtime(self) -> Runtime:
        """The runtime of the current run (or sensor evaluation)."""
        if self._runtime is None:
            raise CatlasError("the catlas resource is used outside a Dagster run: use build()")
        return self._runtime

    @contextmanager
    def reading(self) -> Iterator[StateView]:
        """The sensors' way to read state: a sensor evaluation is not a run.

        Inside an evaluation this is the evaluation's runtime (closed when it ends); called
        on a bare resource it opens a runtime for the block and closes it after.
        """
        if self._runtime is not None:
            yield StateView(self._runtime)
            return
        runtime = self.build()
        try:
            yield StateView(runtime)
        finally:
            runtime.close()


@dg.resource(required_resource_keys={"catlas"}, description="The run's state store.")
def state_store_resource(context: dg.InitResourceContext) -> StateStore:
    return context.resources.catlas.runtime.store


@dg.resource(required_resource_keys={"catlas"}, description="The run's Parquet lake.")
def lake_resource(context: dg.InitResourceContext) -> Lake:
    return context.resources.catlas.runtime.lake


@dg.resource(required_resource_keys={"catlas"}, description="The run's object archive.")
def archive_resource(context: dg.InitResourceContext) -> ObjectArchive:
    return context.resources.catlas.runtime.archive


@dg.resource(
    required_resource_keys={"catlas"},
    description="The change webhook's client (None while CATLAS_NOTIFY_WEBHOOK_URL is unset).",
)
def notifier_resource(context: dg.InitResourceContext) -> WebhookNotifier | None:
    return context.resources.catlas.runtime.notifier


# The adapters are the runtime's in every deployment; what a deployment changes is the
# runtime they come from.
ADAPTERS: dict[str, Any] = {
    "state_store": state_store_resource,
    "lake": lake_resource,
    "archive": archive_resource,
    "notifier": notifier_resource,
}
RESOURCES_LOCAL: dict[str, Any] = {"catlas": CatlasResource(), **ADAPTERS}
RESOURCES_PROD: dict[str, Any] = {"catlas": CatlasResource(prod=True), **ADAPTERS}
RESOURCES_BY_ENV: dict[Env, dict[str, Any]] = {
    Env.LOCAL: RESOURCES_LOCAL,
    Env.PROD: RESOURCES_PROD,
}


def resources_for(settings: Settings) -> dict[str, Any]:
    """The resources of this deployment; refuses (ConfigError) one its settings cannot carry."""
    env = current_env(settings)
    if env is Env.PROD:
        check_prod(settings)  # the code location does not load on the embedded defaults
    return RESOURCES_BY_ENV[env]


defs = dg.Definitions(
    resources=resources_for(Settings.from_env()),
    # Steps of a run share its process, hence its one runtime (and they take the same
    # leases anyway, so separate processes would only wait on each other).
    executor=dg.in_process_executor,
)
