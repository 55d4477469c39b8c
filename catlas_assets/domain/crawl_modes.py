"""The site-crawl modes (spec 003): a registry keyed by `CrawlMode`, each a preset of flags.

A mode is four flags plus the command it runs and the one input it requires. The run row
stores only the mode's key; everything else is read back from this registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from catlas_assets.domain.vocabulary import CrawlMode
from catlas_assets.errors import CatlasError


class Command(StrEnum):
    CRAWL = "crawl"  # drain the URL queue: fetch, store, process, follow links
    PROCESS = "process"  # no fetching: re-run processing from stored raw bytes


class Needs(StrEnum):
    NOTHING = ""
    URL = "url"
    PATH = "path"


@dataclass(frozen=True)
class ModeSpec:
    mode: CrawlMode
    label: str
    force_fetch: bool = False
    skip_hash_check: bool = False
    retry_failed: bool = False
    reindex_extracted: bool = False
    command: Command = Command.CRAWL
    requires: Needs = Needs.NOTHING

    @property
    def extracts_links(self) -> bool:
        return self.command is Command.CRAWL and self.requires is not Needs.URL


MODES: dict[CrawlMode, ModeSpec] = {
    spec.mode: spec
    for spec in (
        ModeSpec(CrawlMode.RESUME, "Resume Crawl"),
        ModeSpec(CrawlMode.CHANGED_NEW, "Crawl Changed+New", force_fetch=True),
        ModeSpec(CrawlMode.FULL, "Full Crawl", force_fetch=True, skip_hash_check=True),
        ModeSpec(CrawlMode.RETRY_FAILED, "Retry Failed", retry_failed=True),
        ModeSpec(CrawlMode.SINGLE_PAGE, "Single Page", force_fetch=True, requires=Needs.URL),
        ModeSpec(CrawlMode.PATH_SCOPE, "Path Scope", force_fetch=True, requires=Needs.PATH),
        ModeSpec(
            CrawlMode.REPROCESS_FAILED,
            "Reprocess Failed",
            retry_failed=True,
            command=Command.PROCESS,
        ),
        ModeSpec(
            CrawlMode.REINDEX_EXISTING,
            "Reindex Existing",
            reindex_extracted=True,
            command=Command.PROCESS,
        ),
    )
}


def parse_mode(value: str) -> ModeSpec:
    """The registry entry of a submitted mode key; anything else is refused."""
    try:
        return MODES[CrawlMode(value)]
    except ValueError:
        known = ", ".join(m.value for m in CrawlMode)
        raise CatlasError(f"unknown crawl mode {value!r} (one of: {known})") from None


@dataclass(frozen=True)
class Inputs:
    url: str | None = None
    path: str | None = None


def required_inputs(spec: ModeSpec, url: str | None, path: str | None) -> Inputs:
    """Keep only the input the mode requires (a stale one typed under another mode is
    dropped, never silently narrowing the run); a missing required input is refused."""
    url = (url or "").strip() or None
    path = path if path is None else path.strip()
    if spec.requires is Needs.URL:
        if not url:
            raise CatlasError(f"mode {spec.mode.value} requires --url")
        return Inputs(url=url)
    if spec.requires is Needs.PATH:
        if path is None:
            raise CatlasError(f"mode {spec.mode.value} requires --path")
        return Inputs(path=path)
    return Inputs()


def command_argv(spec: ModeSpec, config: str, inputs: Inputs) -> list[str]:
    """The command line a local launcher runs for this mode (the flags come from here)."""
    argv = ["catlas", "crawl", "--config", config, "--mode", spec.mode.value]
    if inputs.url:
        argv += ["--url", inputs.url]
    if inputs.path is not None:
        argv += ["--path", inputs.path]
    return argv
