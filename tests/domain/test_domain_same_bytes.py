"""The bytes of the last 200 again: unchanged at the cost of a hash, without a parse.

The short cut must answer what the full path answers (same outcome, hashes and row), and
must not be taken when anything that decides the parse differs: the bytes, the content
type or the connector's version.
"""

from __future__ import annotations

import dataclasses

import pytest
from test_domain_observe import SECTIONS, applied, baseline, fetch, only, page, run

from catlas_assets.domain import observe as observe_module
from catlas_assets.domain.connectors import registry
from catlas_assets.domain.vocabulary import Outcome


def test_the_first_snapshot_remembers_the_raw_hash() -> None:
    sensor, _ = baseline()
    assert sensor.raw_hash is not None and len(sensor.raw_hash) == 64


def test_the_same_bytes_are_unchanged_without_a_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    sensor, blocks = baseline()
    full = run(sensor, fetch(page(SECTIONS)), blocks)  # the full path, for comparison
    monkeypatch.setattr(observe_module, "extract", _refuse)
    short = run(sensor, fetch(page(SECTIONS)), blocks)
    assert short.outcome is full.outcome is Outcome.UNCHANGED
    assert only(short, "observations") == only(full, "observations")
    assert short.objects == {} and short.inbox == [] and short.review == []
    expected = {k: v for k, v in full.sensor_update.items() if k != "raw_hash"}
    assert short.sensor_update == expected


def test_other_bytes_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    sensor, blocks = baseline()
    monkeypatch.setattr(observe_module, "extract", _refuse)
    with pytest.raises(AssertionError, match="parsed"):
        run(sensor, fetch(page([*SECTIONS, "A new section"])), blocks)


def test_another_content_type_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    sensor, blocks = baseline()
    monkeypatch.setattr(observe_module, "extract", _refuse)
    other = fetch(page(SECTIONS), headers={"content-type": "text/plain"})
    with pytest.raises(AssertionError, match="parsed"):
        run(sensor, other, blocks)


def test_a_new_connector_version_parses_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sensor, blocks = baseline()
    connector = registry.get(sensor.connector)
    monkeypatch.setattr(type(connector), "version", connector.version + "-next")
    monkeypatch.setattr(observe_module, "extract", _refuse)
    with pytest.raises(AssertionError, match="parsed"):
        run(sensor, fetch(page(SECTIONS)), blocks)


def test_an_unchanged_parse_keeps_the_raw_hash_current() -> None:
    sensor, blocks = baseline()
    # Different bytes with the same text (attribute order): parsed, unchanged, and the
    # new bytes' hash is what the next run compares with.
    body = page(SECTIONS).replace(b"<html>", b'<html lang="en">')
    result = run(sensor, fetch(body), blocks)
    assert result.outcome is Outcome.UNCHANGED
    after = applied(sensor, result)
    assert after.raw_hash not in (None, sensor.raw_hash)
    again = run(dataclasses.replace(after), fetch(body), blocks)
    assert again.outcome is Outcome.UNCHANGED


def _refuse(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("parsed although the bytes were the last ones")


def test_needs_parse_says_what_observe_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pipeline reads the last snapshot's blocks only when needs_parse says so.
    sensor, blocks = baseline()
    parsed: list[bool] = []
    extract = observe_module.extract

    def watched(*args: object, **kwargs: object) -> object:
        parsed.append(True)
        return extract(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(observe_module, "extract", watched)
    cases = [
        (sensor, fetch(page(SECTIONS))),
        (sensor, fetch(page([*SECTIONS, "A new section"]))),
        (sensor, fetch(page(SECTIONS), headers={"content-type": "text/plain"})),
        (dataclasses.replace(sensor, normalized_hash=None), fetch(page(SECTIONS))),
        (sensor, fetch(page(SECTIONS), status=304, not_modified=True)),
    ]
    for state, answer in cases:
        parsed.clear()
        run(state, answer, blocks)
        assert observe_module.needs_parse(state, answer) is bool(parsed)
