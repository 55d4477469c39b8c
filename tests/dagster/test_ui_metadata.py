"""What the Dagster UI shows: every lake asset with its declared column schema, a
description, an owner, kinds and a group; every job, schedule and sensor described; a
crawl tick's Dagster run tagged with its verdict."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.lake_schema import columns
from fixture_web import DEFAULT_NOW
from sensors_dag.jobs import crawl_tick

LAKE_ASSETS = ("observations", "snapshots", "changes", "entity_events", "entities", "discovery")


@pytest.mark.parametrize("name", LAKE_ASSETS)
def test_each_lake_asset_shows_its_columns_owner_kinds_and_group(name: str) -> None:
    graph = defs.resolve_asset_graph()
    node = graph.get(dg.AssetKey(name))
    schema = node.metadata["dagster/column_schema"]
    assert [(c.name, c.type) for c in schema.columns] == columns(name)
    assert node.description and len(node.description) > 40
    assert node.owners and node.group_name == "lake"
    assert {"parquet", "duckdb"} <= set(node.kinds)


def test_every_job_schedule_and_sensor_is_described() -> None:
    repo = defs.get_repository_def()
    undescribed = [
        job.name
        for job in repo.get_all_jobs()
        if not job.description and not job.name.startswith("__")
    ]
    undescribed += [s.name for s in repo.schedule_defs if not s.description]
    undescribed += [s.name for s in repo.sensor_defs if not s.description]
    assert undescribed == []


def test_a_crawl_tick_run_carries_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    resource = CatlasResource(state_dir=str(tmp_path / "state"))
    with dg.instance_for_test() as instance:
        result = crawl_tick.execute_in_process(instance=instance, resources={"catlas": resource})
        run = instance.get_run_by_id(result.run_id)
        assert run is not None
        assert run.tags["catlas/outcome"] == "success"  # nothing due: an empty, clean tick
        assert run.tags["catlas/stop"] == "queue_empty"
        assert run.tags["catlas/run_id"] == result.output_for_node("crawl_tick_op")
