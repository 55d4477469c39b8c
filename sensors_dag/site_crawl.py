"""The `site_crawl` job: one site-crawl run (spec 003) with its mode and inputs as run config.

The run config is validated before launch: `mode` is an enumeration Dagster checks itself,
and `site_crawl_run_config` (what a trigger calls) applies the same checks as
`catlas crawl` (the config exists, the mode's required input is given and in scope),
dropping an input the mode does not require. The Dagster run id is recorded as the run's
launch handle (launcher `dagster`); in production the instance's `EcsRunLauncher` starts
each run as its own task.
"""

from typing import Any

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.vocabulary import CrawlMode, RunOutcome
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_crawl import CrawlRequest, prepare, run_site_crawl


class SiteCrawlConfig(dg.Config):
    config: str
    mode: CrawlMode
    url: str | None = None
    path: str | None = None


def site_crawl_run_config(runtime: Runtime, request: CrawlRequest) -> dict[str, Any]:
    """The job's run config for `request`, or CatlasError before anything is launched."""
    prepared = prepare(runtime, request, strict=False)
    op_config: dict[str, Any] = {"config": request.config, "mode": prepared.spec.mode.name}
    if prepared.inputs.url is not None:
        op_config["url"] = prepared.inputs.url
    if prepared.inputs.path is not None:
        op_config["path"] = prepared.inputs.path
    return {"ops": {"site_crawl_op": {"config": op_config}}}


@dg.op(description="Crawl a config's site in one mode and record one verdict.")
def site_crawl_op(
    context: dg.OpExecutionContext, config: SiteCrawlConfig, catlas: CatlasResource
) -> dg.Output[str]:
    runtime = catlas.runtime
    request = CrawlRequest(config.config, config.mode.value, config.url, config.path)
    result = run_site_crawl(runtime, prepare(runtime, request, strict=False),
                            launch_handle=context.run_id)  # fmt: skip
    report = result.report
    metadata = {
        "catlas_run_id": report.run_id,
        "stop": report.stop.value,
        "outcome": report.outcome.value,
        "detail": report.detail,
        **{f"events_{k}": dg.MetadataValue.int(v) for k, v in result.events.items()},
    }
    if report.outcome is RunOutcome.FAILED:
        raise dg.Failure(description=report.summary_line, metadata=metadata)
    context.log.info(report.summary_line)
    return dg.Output(report.run_id, metadata=metadata)


@dg.job(description="One site crawl (config, mode, inputs).", tags={"catlas/kind": "site_crawl"})
def site_crawl() -> None:
    site_crawl_op()
