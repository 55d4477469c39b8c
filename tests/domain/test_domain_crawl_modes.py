"""The crawl-mode registry and the per-URL transition rule (spec 003)."""

from __future__ import annotations

import pytest

from catlas_assets.domain.crawl_events import transition
from catlas_assets.domain.crawl_modes import (
    MODES,
    Command,
    Needs,
    command_argv,
    parse_mode,
    required_inputs,
)
from catlas_assets.domain.vocabulary import CrawlMode, PageEvent, Transition
from catlas_assets.errors import CatlasError

FLAGS = {
    # mode: (force_fetch, skip_hash_check, retry_failed, reindex_extracted, command, requires)
    "resume": (False, False, False, False, Command.CRAWL, Needs.NOTHING),
    "changed_new": (True, False, False, False, Command.CRAWL, Needs.NOTHING),
    "full": (True, True, False, False, Command.CRAWL, Needs.NOTHING),
    "retry_failed": (False, False, True, False, Command.CRAWL, Needs.NOTHING),
    "single_page": (True, False, False, False, Command.CRAWL, Needs.URL),
    "path_scope": (True, False, False, False, Command.CRAWL, Needs.PATH),
    "reprocess_failed": (False, False, True, False, Command.PROCESS, Needs.NOTHING),
    "reindex_existing": (False, False, False, True, Command.PROCESS, Needs.NOTHING),
}


@pytest.mark.parametrize("mode", list(FLAGS))
def test_every_mode_is_its_preset(mode: str) -> None:
    spec = parse_mode(mode)
    assert spec is MODES[CrawlMode(mode)]
    got = (
        spec.force_fetch,
        spec.skip_hash_check,
        spec.retry_failed,
        spec.reindex_extracted,
        spec.command,
        spec.requires,
    )
    assert got == FLAGS[mode]


def test_the_registry_covers_the_enumeration_and_only_single_page_stops_links() -> None:
    assert set(MODES) == set(CrawlMode)
    assert [
        m.value for m, s in MODES.items() if not s.extracts_links and s.command is Command.CRAWL
    ] == ["single_page"]


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(CatlasError, match="unknown crawl mode"):
        parse_mode("everything")


def test_inputs_a_mode_does_not_require_are_dropped_and_missing_ones_refused() -> None:
    assert required_inputs(parse_mode("resume"), "https://x.test/", "/news").url is None
    assert required_inputs(parse_mode("path_scope"), "https://x.test/", "/news").url is None
    assert required_inputs(parse_mode("single_page"), "https://x.test/a", "/n").path is None
    with pytest.raises(CatlasError, match="requires --url"):
        required_inputs(parse_mode("single_page"), None, None)
    with pytest.raises(CatlasError, match="requires --path"):
        required_inputs(parse_mode("path_scope"), None, None)


def test_command_argv_reads_the_mode_back() -> None:
    spec = parse_mode("path_scope")
    argv = command_argv(spec, "blog", required_inputs(spec, None, "/news"))
    assert argv == [
        "catlas",
        "crawl",
        "--config",
        "blog",
        "--mode",
        "path_scope",
        "--path",
        "/news",
    ]


@pytest.mark.parametrize(
    ("previous", "event", "expected"),
    [
        ("success", PageEvent.FAILED, Transition.REGRESSION),
        ("failure", PageEvent.NEW, Transition.RECOVERY),
        ("failure", PageEvent.UNCHANGED, Transition.RECOVERY),
        ("failure", PageEvent.CHANGED, Transition.RECOVERY),
        ("success", PageEvent.UNCHANGED, None),
        ("failure", PageEvent.FAILED, None),
        (None, PageEvent.FAILED, None),
        (None, PageEvent.NEW, None),
        ("success", PageEvent.REDIRECTED, None),
        ("failure", PageEvent.SKIPPED, None),
    ],
)
def test_transition_against_the_last_success_or_failure(
    previous: str | None, event: PageEvent, expected: Transition | None
) -> None:
    assert transition(previous, event) is expected
