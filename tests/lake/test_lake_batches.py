"""Lake rows to Arrow (`lake_batches.to_arrow`): values already as a column keeps them go
through as they are, any other value is converted, and both give the same column."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.errors import StorageError
from resources import lake_batches
from resources.lake_batches import _by_column, pack, to_arrow, unpack
from resources.lake_tables import TABLES

OBSERVATIONS = TABLES["observations"]
INSTANT = datetime(2026, 1, 5, 8, 0, 0, 123456, tzinfo=UTC)


def _row(**values) -> dict:
    return {"observation_id": "obs_1", "sensor_id": 1, "fetched_at": INSTANT, **values}


def test_an_instant_reads_the_same_however_it_is_given() -> None:
    given = [
        INSTANT,  # aware UTC
        INSTANT.replace(tzinfo=None),  # naive: UTC, never the machine's zone
        INSTANT.astimezone(timezone(timedelta(hours=2))),  # another offset
        "2026-01-05 08:00:00.123456",  # text, as SQLite gives it back
        "2026-01-05T10:00:00.123456+02:00",
    ]
    for value in given:
        table = to_arrow(OBSERVATIONS, [_row(fetched_at=value)])
        assert table.column("fetched_at").to_pylist() == [INSTANT], value
    # A batch that mixes them is converted value by value: the same instants.
    mixed = to_arrow(OBSERVATIONS, [_row(fetched_at=v) for v in given])
    assert mixed.column("fetched_at").to_pylist() == [INSTANT] * len(given)


def test_a_text_column_drops_nul_and_writes_documents_and_instants_as_text() -> None:
    rows = [
        _row(url="https://acme.test/jobs", etag='"a\x00b"'),
        _row(url="https://acme.test/\x00x", crawl_config={"b": 1, "a": [1, 2]}),
        _row(url=None, crawl_config=["x"], last_modified=INSTANT, etag=b'W/"e"'),
    ]
    table = to_arrow(OBSERVATIONS, rows)
    assert table.column("url").to_pylist() == [
        "https://acme.test/jobs",
        "https://acme.test/x",
        None,
    ]
    assert table.column("etag").to_pylist() == ['"ab"', None, 'W/"e"']
    assert table.column("crawl_config").to_pylist() == [None, '{"a": [1, 2], "b": 1}', '["x"]']
    assert table.column("last_modified").to_pylist() == [None, None, INSTANT.isoformat()]
    # Plain text alone takes the direct path: the same answer, row by row.
    for row in rows:
        alone = to_arrow(OBSERVATIONS, [row])
        assert alone.to_pylist() == table.slice(rows.index(row), 1).to_pylist()


def test_the_table_has_the_lake_schema_and_missing_columns_are_null() -> None:
    table = to_arrow(
        OBSERVATIONS,
        [_row(http_status=304, not_modified=True, outcome=Outcome.NOT_MODIFIED)],
    )
    assert table.schema == OBSERVATIONS.schema
    assert table.column("http_status").to_pylist() == [304]
    assert table.column("outcome").to_pylist() == ["not_modified"]  # a StrEnum as its value
    assert table.column("content_hash").to_pylist() == [None]
    assert unpack(pack({"observations": table}))["observations"].equals(table)


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(StorageError, match=r"observations: unknown column\(s\) \['colour'\]"):
        to_arrow(OBSERVATIONS, [_row(), _row(colour="red")])


def test_no_rows_give_an_empty_table_of_the_schema() -> None:
    table = to_arrow(OBSERVATIONS, [])
    assert table.num_rows == 0 and table.schema == OBSERVATIONS.schema
    assert isinstance(table, pa.Table)


_INSTANTS = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.none()
).map(lambda naive: naive.replace(tzinfo=UTC))
_TEXT = st.text(alphabet=st.sampled_from("ab é{}"), max_size=6)


def _plain(type_: pa.DataType) -> st.SearchStrategy[object]:
    """A value as a column of `type_` keeps it."""
    if pa.types.is_timestamp(type_):
        return st.one_of(st.none(), _INSTANTS)
    if type_ == pa.string():
        return st.one_of(st.none(), _TEXT, st.sampled_from(list(Outcome)))
    if pa.types.is_boolean(type_):
        return st.one_of(st.none(), st.booleans())
    if pa.types.is_floating(type_):
        return st.one_of(st.none(), st.floats(allow_nan=False))
    return st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1))


def _odd(type_: pa.DataType) -> st.SearchStrategy[object]:
    """A value from elsewhere: text from SQLite, a naive or offset instant, a document, a
    NUL, bytes; a number where an instant belongs (refused by both conversions)."""
    if pa.types.is_timestamp(type_):
        return st.one_of(
            _INSTANTS.map(lambda i: i.replace(tzinfo=None)),
            _INSTANTS.map(lambda i: i.astimezone(timezone(timedelta(hours=-5)))),
            _INSTANTS.map(lambda i: i.isoformat(" ")),
            st.integers(0, 2**40),
            st.floats(0, 1e9),
        )
    if type_ == pa.string():
        nul = st.tuples(_TEXT, _TEXT).map("\x00".join)
        return st.one_of(
            nul, _INSTANTS, st.dictionaries(_TEXT, st.integers(0, 9), max_size=2),
            _TEXT.map(str.encode), nul.map(str.encode),
        )  # fmt: skip
    return _plain(type_)


@st.composite
def _lake_rows(draw: st.DrawFn) -> list[dict]:
    """Rows of plain values with a few odd ones among them."""
    fields = list(OBSERVATIONS.schema)
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        row = {f.name: draw(_plain(f.type)) for f in fields if draw(st.booleans())}
        for f in draw(st.lists(st.sampled_from(fields), max_size=2)):
            row[f.name] = draw(_odd(f.type))
        rows.append(row)
    return rows


@settings(max_examples=300, deadline=None)
@given(rows=_lake_rows())
def test_rows_converted_in_one_call_equal_rows_converted_column_by_column(rows: list[dict]) -> None:
    try:
        expected = _by_column(OBSERVATIONS, rows)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)):
            to_arrow(OBSERVATIONS, rows)
    else:
        assert to_arrow(OBSERVATIONS, rows).equals(expected)


def test_rows_as_their_columns_keep_them_are_converted_in_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(*_args: object) -> pa.Table:
        raise AssertionError("converted column by column")

    monkeypatch.setattr(lake_batches, "_by_column", refused)
    rows = [_row(url="https://acme.test/jobs", outcome=Outcome.OK, http_status=200)] * 3
    assert to_arrow(OBSERVATIONS, rows).column("outcome").to_pylist() == ["ok"] * 3
    with pytest.raises(AssertionError, match="column by column"):
        to_arrow(OBSERVATIONS, [_row(etag='"a\x00b"')])


def test_a_snapshots_documents_are_written_as_text_in_the_same_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every snapshot of a first fetch carries its extraction as documents: those rows
    # went column by column, after a failed first try, before documents were made text.
    snapshots = TABLES["snapshots"]
    row = {
        "snapshot_id": "snp_1",
        "captured_at": INSTANT,
        "extracted": {"jobs": [{"title": "Engineer", "id": 7}], "a": None},
        "extracted_summary": ("jobs", 1),
        "previous_snapshot_id": INSTANT.replace(tzinfo=None),
    }
    expected = _by_column(snapshots, [row, {**row, "extracted": None}])

    def refused(*_args: object) -> pa.Table:
        raise AssertionError("converted column by column")

    monkeypatch.setattr(lake_batches, "_by_column", refused)
    table = to_arrow(snapshots, [row, {**row, "extracted": None}])
    assert table.equals(expected)
    assert table.column("extracted").to_pylist() == [
        '{"a": null, "jobs": [{"id": 7, "title": "Engineer"}]}',
        None,
    ]
    assert table.column("extracted_summary").to_pylist() == ['["jobs", 1]'] * 2
    assert row["extracted"] == {"jobs": [{"title": "Engineer", "id": 7}], "a": None}  # untouched
