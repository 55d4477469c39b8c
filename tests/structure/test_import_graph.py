"""The dependency direction of the source tree, read from its import statements with `ast`
(nothing is imported): the fronts (the CLI, the Dagster definitions, the orchestration)
reach the adapters only through the services, the domain stays pure, and only the
composition root knows the orchestration package.

Every import counts, at module level or inside a function, under `TYPE_CHECKING` or not.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("catlas_assets", "resources", "sensors_dag")
FIRST_PARTY = {*PACKAGES, "fixture_web"}

FRONTS = ("catlas_assets.cli", "catlas_assets.defs", "sensors_dag")
DOMAIN = "catlas_assets.domain"
# What the domain may import besides the standard library: itself, the error types, the id
# scheme, and the pure parsing and matching libraries it is built on (no I/O among them).
DOMAIN_FIRST_PARTY = ("catlas_assets.domain", "catlas_assets.errors", "catlas_assets.ids")
DOMAIN_LIBRARIES = {
    "charset_normalizer",
    "defusedxml",
    "feedparser",
    "numpy",
    "rapidfuzz",
    "selectolax",
    "simhash",
    "tldextract",
}
COMPOSITION_ROOT = "catlas_assets.definitions"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # what it imports, absolute and dotted (`from a import b` is `a.b`)
    line: int

    @property
    def top(self) -> str:
        return self.target.split(".")[0]

    def refused(self, why: str) -> str:
        return f"{self.module} imports {self.target} (line {self.line}): {why}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, *, is_package: bool = False) -> Iterator[Import]:
    """Every import in `source`, relative ones resolved against `module`."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            origin = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                yield Import(module, f"{origin}.{alias.name}", node.lineno)


def source_imports() -> list[Import]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found.extend(
                imports_of(
                    path.read_text(), module_name(path), is_package=path.name == "__init__.py"
                )
            )
    return found


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def front_violations(imports: Iterable[Import]) -> list[str]:
    return [
        i.refused("a front reaches the adapters only through catlas_assets.services")
        for i in imports
        if _within(i.module, FRONTS) and i.top == "resources"
    ]


def domain_violations(imports: Iterable[Import]) -> list[str]:
    return [
        i.refused(
            "the domain imports only the standard library, its pure libraries, "
            "catlas_assets.domain, catlas_assets.errors and catlas_assets.ids"
        )
        for i in imports
        if _within(i.module, [DOMAIN])
        and not (
            i.top in sys.stdlib_module_names
            or i.top in DOMAIN_LIBRARIES
            or _within(i.target, DOMAIN_FIRST_PARTY)
        )
    ]


def orchestration_violations(imports: Iterable[Import]) -> list[str]:
    problems = []
    for i in imports:
        inside = _within(i.module, ["sensors_dag"])
        if inside and i.top in FIRST_PARTY and i.top not in ("catlas_assets", "sensors_dag"):
            problems.append(i.refused("sensors_dag builds on catlas_assets only"))
        if not inside and i.top == "sensors_dag" and i.module != COMPOSITION_ROOT:
            problems.append(i.refused(f"only {COMPOSITION_ROOT} imports sensors_dag"))
    return problems


# -- the rules, over the real tree --------------------------------------------------------


def test_the_scan_sees_every_package_and_resolves_imports() -> None:
    imports = source_imports()
    modules = {i.module for i in imports}
    assert {"catlas_assets.cli.app", "catlas_assets.definitions", "sensors_dag.jobs"} <= modules
    assert any(i.module.startswith(DOMAIN) for i in imports)
    # The services are where the adapters are reached: the scan must see that.
    assert any(
        i.module == "catlas_assets.services.runtime" and i.top == "resources" for i in imports
    )


def test_no_front_imports_resources() -> None:
    problems = front_violations(source_imports())
    assert not problems, "\n".join(problems)


def test_the_domain_imports_only_the_domain_errors_ids_and_pure_libraries() -> None:
    problems = domain_violations(source_imports())
    assert not problems, "\n".join(problems)


def test_sensors_dag_builds_on_catlas_assets_and_only_the_composition_root_imports_it() -> None:
    problems = orchestration_violations(source_imports())
    assert not problems, "\n".join(problems)


# -- the checker itself: each rule refuses what it must, naming module and import ------------


def test_a_front_importing_an_adapter_is_named_with_the_import() -> None:
    source = "def run():\n    from resources.state import inbox\n"
    [problem] = front_violations(imports_of(source, "catlas_assets.cli.facts"))
    assert problem.startswith("catlas_assets.cli.facts imports resources.state.inbox (line 2)")
    assert front_violations(imports_of(source, "catlas_assets.services.notify")) == []


def test_the_domain_may_not_import_services_dagster_or_io_libraries() -> None:
    source = (
        "from __future__ import annotations\n"
        "import re\n"
        "import tldextract\n"
        "from catlas_assets.errors import CatlasError\n"
        "from . import urls\n"
        "from catlas_assets.services import runtime\n"
        "import dagster\n"
        "from sqlalchemy import select\n"
        "import httpx, duckdb\n"
        "from catlas_assets import settings\n"
    )
    problems = domain_violations(imports_of(source, "catlas_assets.domain.observe"))
    refused = [p.split(" imports ")[1].split(" (")[0] for p in problems]
    assert refused == [
        "catlas_assets.services.runtime",
        "dagster",
        "sqlalchemy.select",
        "httpx",
        "duckdb",
        "catlas_assets.settings",
    ]


def test_sensors_dag_may_not_import_resources_nor_be_imported_elsewhere() -> None:
    inside = imports_of("from resources.state import inbox\n", "sensors_dag.jobs")
    outside = imports_of("from sensors_dag.jobs import crawl_tick\n", "catlas_assets.cli.runs")
    root = imports_of("from sensors_dag import definitions\n", COMPOSITION_ROOT)
    assert orchestration_violations([*inside, *outside, *root]) == [
        "sensors_dag.jobs imports resources.state.inbox (line 1): "
        "sensors_dag builds on catlas_assets only",
        "catlas_assets.cli.runs imports sensors_dag.jobs.crawl_tick (line 1): "
        f"only {COMPOSITION_ROOT} imports sensors_dag",
    ]


def test_relative_imports_resolve_against_the_importing_package() -> None:
    [sibling] = imports_of("from .vocabulary import Surface\n", "catlas_assets.domain.taxonomy")
    [parent] = imports_of("from .. import errors\n", "catlas_assets.domain.taxonomy")
    [own] = imports_of("from . import app\n", "catlas_assets.cli", is_package=True)
    assert sibling.target == "catlas_assets.domain.vocabulary.Surface"
    assert parent.target == "catlas_assets.errors"
    assert own.target == "catlas_assets.cli.app"
