"""The dbt_intel project as Dagster sees it (its own module: the manifest must exist when
the code loads, made by `dbt parse` in the build step, `make dbt-parse`)."""

from pathlib import Path

from dagster_dbt import DbtProject

PROJECT_DIR = Path(__file__).resolve().parents[2] / "dbt_intel"

dbt_intel_project = DbtProject(project_dir=PROJECT_DIR, profiles_dir=PROJECT_DIR)
