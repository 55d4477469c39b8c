"""Lake rows as Arrow: the dicts a sensor run makes, converted once, packed for the outbox.

A run's lake rows wait in the state store's outbox until a flush writes them to Parquet.
They are converted to Arrow where they are committed (a tick's lanes, in parallel), one
table per lake table and commit group, and packed as Arrow IPC streams; a flush then only
concatenates and writes them, where converting every row at the end of a tick was one
core's serial work.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any

import pyarrow as pa

from catlas_assets.errors import StorageError
from resources.json_values import plain, without_nul
from resources.lake_tables import Dimension, LakeTable

_LENGTH = struct.Struct(">I")


def to_arrow(table: LakeTable | Dimension, rows: list[Mapping[str, Any]]) -> pa.Table:
    """`rows` in the table's schema: timestamps aware UTC, JSON columns as text, no NUL
    in a string (PostgreSQL keeps none, so no lake row does either)."""
    known = frozenset(table.schema.names)
    for row in rows:
        if not known.issuperset(row):
            unknown = sorted(set(row) - known)
            raise StorageError(f"{table.name}: unknown column(s) {unknown}")
    converted = _in_one_call(table, rows)
    return converted if converted is not None else _by_column(table, rows)


def _by_column(table: LakeTable | Dimension, rows: list[Mapping[str, Any]]) -> pa.Table:
    arrays = [_column([row.get(f.name) for row in rows], f.type) for f in table.schema]
    return pa.Table.from_arrays(arrays, schema=table.schema)


def _in_one_call(table: LakeTable | Dimension, rows: list[Mapping[str, Any]]) -> pa.Table | None:
    """The rows converted by Arrow in one call, as a struct array, when every value is as
    its column keeps it or is a document or an instant for a text column (written as text
    first, as `_text` does); else None, and each column is converted on its own (`_column`).
    A group's rows were thirty Arrow calls, one per column, three times this one's time."""
    timestamps = _timestamp_names(table.schema)
    texts = _text_names(table.schema)
    as_given: list[Mapping[str, Any]] | None = None  # a copy, once a row needs text made
    for index, row in enumerate(rows):
        made: dict[str, Any] | None = None
        for name, value in row.items():
            # Most tests first: text, then the numbers and flags that most other values are.
            if isinstance(value, str):
                if "\x00" in value:
                    return None
            elif value is None or isinstance(value, _NUMBERS):
                if value is not None and name in timestamps:
                    return None  # Arrow would read a number as a count of microseconds
            elif isinstance(value, bytes):
                return None  # decoded, and its NULs dropped, by `_text`
            elif name in texts:
                if isinstance(value, _MADE_TEXT):
                    # A snapshot's extraction, an event's attributes: a first pass's every row.
                    made = made or {}
                    made[name] = _text(value)
            elif name in timestamps and not isinstance(value, datetime):
                return None  # a date, say: `_as_datetime` reads it
        if made:
            as_given = as_given or list(rows)
            as_given[index] = {**row, **made}
    try:
        return pa.Table.from_struct_array(pa.array(as_given or rows, type=_struct_of(table.schema)))
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return None  # a number in a text column, say: converted column by column


# Values a text column keeps as `_text` writes them; numbers and flags. (Tuples: a union
# type in `isinstance` took a third of the rows' test.)
_MADE_TEXT = (dict, list, tuple, datetime)
_NUMBERS = (int, float)


@cache
def _struct_of(schema: pa.Schema) -> pa.StructType:
    return pa.struct(list(schema))


@cache
def _text_names(schema: pa.Schema) -> frozenset[str]:
    return frozenset(f.name for f in schema if f.type == pa.string())


@cache
def _timestamp_names(schema: pa.Schema) -> frozenset[str]:
    return frozenset(f.name for f in schema if pa.types.is_timestamp(f.type))


def _column(values: list[Any], type_: pa.DataType) -> pa.Array:
    """One column's values as Arrow. Values already as the column keeps them (text without
    NUL, a `StrEnum` member included; an aware or naive `datetime`: Arrow reads a naive one
    as UTC, as `_as_datetime` does) go to Arrow as they are; else each value is converted."""
    if pa.types.is_timestamp(type_):
        if not all(v is None or isinstance(v, datetime) for v in values):
            values = [_as_datetime(v) if v is not None else None for v in values]
        return pa.array(values, type=type_)
    if type_ != pa.string():
        return pa.array(values, type=type_)
    if not all(v is None or (isinstance(v, str) and "\x00" not in v) for v in values):
        values = [_text(v) for v in values]
    return pa.array(values, type=type_)


def _as_datetime(value: Any) -> datetime:
    """An aware instant; a naive value is UTC (as Arrow stores it), never the machine's zone."""
    instant = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)


def _text(value: Any) -> Any:
    """A string column's value: JSON documents as text (keys sorted), instants in ISO-8601."""
    if isinstance(value, dict | list | tuple):
        value = _json(value)
    elif isinstance(value, datetime):
        value = value.isoformat()
    elif isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "")
    return value


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=plain)
    except TypeError:  # keys of mixed types: made strings first, as JSON has them
        text = json.dumps(
            json.loads(json.dumps(value, default=plain)), ensure_ascii=False, sort_keys=True
        )
    if "\\u0000" in text:  # a NUL inside a document: dropped wherever it is
        text = json.dumps(without_nul(json.loads(text)), ensure_ascii=False, sort_keys=True)
    return text


def pack(tables: Mapping[str, pa.Table]) -> bytes:
    """Several named tables as one blob: a JSON header of names and lengths, then one
    Arrow IPC stream per table."""
    streams = []
    for table in tables.values():
        sink = io.BytesIO()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        streams.append(sink.getvalue())
    header = json.dumps([[name, len(s)] for name, s in zip(tables, streams, strict=True)])
    return _LENGTH.pack(len(header)) + header.encode() + b"".join(streams)


def unpack(data: bytes) -> dict[str, pa.Table]:
    (size,) = _LENGTH.unpack_from(data)
    offset = _LENGTH.size + size
    tables = {}
    for name, length in json.loads(data[_LENGTH.size : offset]):
        tables[name] = pa.ipc.open_stream(data[offset : offset + length]).read_all()
        offset += length
    return tables
