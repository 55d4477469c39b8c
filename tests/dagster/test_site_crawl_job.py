"""The Dagster `site_crawl` job: validated run config, the shared service, the launch handle."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.errors import CatlasError
from catlas_assets.services.crawl_configs import add_config
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_crawl import CrawlRequest
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from sensors_dag.site_crawl import site_crawl, site_crawl_run_config


@pytest.fixture
def resource(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    runtime = Runtime(Settings.from_env(state_dir=str(tmp_path / "state"), hosts=str(hosts)))
    add_config(runtime, "quill", company="Quill Press", base_url="http://quillpress.com/")
    runtime.close()
    return CatlasResource(state_dir=str(tmp_path / "state"), hosts=str(hosts))


def test_the_job_is_in_the_code_location() -> None:
    assert "site_crawl" in {job.name for job in defs.get_repository_def().get_all_jobs()}


def test_a_site_crawl_run_records_the_dagster_run_id_as_its_handle(
    resource: CatlasResource, web: FixtureWeb
) -> None:
    runtime = resource.build()
    run_config = site_crawl_run_config(runtime, CrawlRequest("quill", "changed_new", url="stale"))
    assert "url" not in run_config["ops"]["site_crawl_op"]["config"]  # dropped, not narrowing
    result = site_crawl.execute_in_process(run_config=run_config, resources={"catlas": resource})
    assert result.success
    catlas_run = result.output_for_node("site_crawl_op")
    row = runtime.store.run(catlas_run)
    assert row is not None
    assert (row["kind"], row["mode"], row["status"]) == ("site_crawl", "changed_new", "COMPLETED")
    assert (row["launcher"], row["launch_handle"]) == ("dagster", result.run_id)
    assert {r.host for r in web.requests} == {"quillpress.com"}
    runtime.close()


def test_bad_mode_or_missing_input_is_rejected_before_launch(
    resource: CatlasResource, web: FixtureWeb
) -> None:
    runtime = resource.build()
    with pytest.raises(dg.DagsterInvalidConfigError):
        site_crawl.execute_in_process(
            run_config={
                "ops": {"site_crawl_op": {"config": {"config": "quill", "mode": "everything"}}}
            },
            resources={"catlas": resource},
        )
    for request in (
        CrawlRequest("quill", "single_page"),
        CrawlRequest("quill", "path_scope"),
        CrawlRequest("quill", "single_page", url="http://inkwell-press.com/blog"),
        CrawlRequest("quill", "sideways"),
    ):
        with pytest.raises(CatlasError):
            site_crawl_run_config(runtime, request)
    assert runtime.store.runs(kind="site_crawl") == []
    assert web.requests == []
    runtime.close()
