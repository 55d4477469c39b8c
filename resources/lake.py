"""The Parquet lake: append-only tables, Hive-partitioned by UTC date and hour.

Ticks append one file per table and hour (``part-<batch>.parquet``, named after the batch so
that writing the same batch twice replaces rather than duplicates); hourly compaction
merges a partition's files into one (``compacted-<digest>.parquet``), keeping one row per id.

No file a reader may be reading is overwritten or deleted on the spot. Compaction and
reprocess write their result under a new name and then hide the files it replaces by listing
them in the partition's ``_superseded.json``; that one atomic write is the switch from the old
set to the new. Hidden files are deleted by a later compaction once ``HIDDEN_GRACE_S`` has
passed, so a reader that listed them first keeps working that long. Every change of a
partition's state is made under that partition's lock (`PartitionLocks`), so a compaction
and a reprocess of one hour, in two processes, never lose each other's hides.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import posixpath
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, ClassVar, Protocol

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from catlas_assets.errors import StorageError
from resources import lake_latest
from resources.lake_batches import to_arrow
from resources.lake_tables import DIMENSIONS, JSON_COLUMNS, TABLES, Dimension, LakeTable
from resources.storage import Storage, process_threads

REPLACES_KEY = b"catlas.replaces"
# Per partition: {"hidden": {file name: unix time hidden}}; its files readers must not see.
HIDDEN_STATE = "_superseded.json"
# How long a hidden file stays on disk: a reader (a DuckDB view, a dbt view built before the
# swap) that listed it keeps answering for that long; one hour spans any query we run.
HIDDEN_GRACE_S = 3600.0


@dataclass(frozen=True)
class WrittenFile:
    table: str
    key: str
    rows: int
    bytes: int
    partition: str  # "date=YYYY-MM-DD/hour=HH"


@dataclass(frozen=True)
class Compaction:
    table: str
    partition: str
    files_before: int
    rows: int
    bytes: int
    duplicates_dropped: int


def partition_of(instant: datetime) -> str:
    utc = instant.astimezone(UTC)
    return f"date={utc:%Y-%m-%d}/hour={utc:%H}"


class PartitionLocks(Protocol):
    def hold(self, name: str) -> AbstractContextManager[Callable[[], None]]:
        """Hold lock `name` for the body, which gets a `confirm()` that raises once the
        lock is lost (a lease that expired); called before each state write."""
        ...


class ProcessLocks:
    """One lock per name within this process: enough for threads, not for two processes
    (a deployment's lake gets the state store's leases, `PartitionLeases`)."""

    # Shared by every Lake of the process: two Lakes over one folder exclude each other.
    _guard: ClassVar[threading.Lock] = threading.Lock()
    _locks: ClassVar[dict[str, threading.Lock]] = {}

    @contextmanager
    def hold(self, name: str) -> Iterator[Callable[[], None]]:
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            yield lambda: None


class Lake:
    def __init__(self, storage: Storage, locks: PartitionLocks | None = None) -> None:
        self.storage = storage
        self.locks: PartitionLocks = locks or ProcessLocks()

    def _lock(self, table: str, partition: str) -> AbstractContextManager[Callable[[], None]]:
        return self.locks.hold(self.lock_name(f"{table}/{partition}"))

    def lock_name(self, what: str) -> str:
        # Named after the lake too: two lakes sharing a state store do not wait for each other.
        digest = hashlib.sha256(self.storage.uri("").encode()).hexdigest()[:8]
        return f"lake:{digest}:{what}"

    @staticmethod
    def table(name: str) -> LakeTable:
        try:
            return TABLES[name]
        except KeyError:
            raise StorageError(f"unknown lake table {name!r}") from None

    # -- writing ------------------------------------------------------------------------
    def write_rows(
        self, table_name: str, rows: Iterable[Mapping[str, Any]], batch_id: str
    ) -> list[WrittenFile]:
        table = self.table(table_name)
        rows = list(rows)
        if any(row.get(table.time_column) is None for row in rows):
            raise StorageError(f"{table.name}: a row has no {table.time_column}")
        return self.write_arrow(table_name, to_arrow(table, rows), batch_id)

    def write_arrow(self, table_name: str, data: pa.Table, batch_id: str) -> list[WrittenFile]:
        """Append `data` (columns of the table's schema) as one file per hour it spans.

        The columnar path: `write_rows` converts its rows and comes here; a bulk writer
        (a backfill, the scale benchmark) hands over Arrow columns and skips the per-row cost.
        """
        table = self.table(table_name)
        unknown = set(data.column_names) - set(table.schema.names)
        if unknown:
            raise StorageError(f"{table.name}: unknown column(s) {sorted(unknown)}")
        if not data.num_rows:
            return []
        if data.schema != table.schema:
            data = _conform(data, table.schema)
        if any(column.num_chunks > 1 for column in data.columns):
            # A flush's rows come as one small chunk per commit group: the Parquet writer
            # took a third more CPU over 125 chunks of 16 rows than over one made first.
            data = data.combine_chunks()
        times = data.column(table.time_column)
        if times.null_count:
            raise StorageError(f"{table.name}: a row has no {table.time_column}")
        # The hour since the epoch of each row (UTC microseconds), the partition it goes to.
        micros = times.cast(pa.int64()).to_numpy()
        hours = np.floor_divide(micros, 3_600_000_000)
        if np.any(hours[1:] < hours[:-1]):
            # Out of time order: a stable sort keeps each partition's rows in their order.
            order = np.argsort(hours, kind="stable")
            data, hours = data.take(pa.array(order)), hours[order]
        # Rows in hour order: each partition is a slice (no copy), cut where the hour changes.
        cuts = [0, *(np.flatnonzero(hours[1:] != hours[:-1]) + 1).tolist(), len(hours)]
        parts = [data.slice(begin, end - begin) for begin, end in itertools.pairwise(cuts)]
        partitions = [
            partition_of(datetime.fromtimestamp(int(hours[begin]) * 3600, UTC))
            for begin in cuts[:-1]
        ]
        keys = [f"{table.name}/{p}/part-{batch_id}.parquet" for p in partitions]
        # Each partition is encoded straight into its file, on every core (pyarrow encodes
        # without the interpreter lock); the files appear together once all are made and
        # flushed, so a refused batch writes nothing. (Encoding into memory, then writing
        # every file from one thread, took 40 % longer.)
        cores = len(os.sched_getaffinity(0))
        pool = process_threads("catlas-parquet", cores) if len(parts) > 1 else None
        sizes = self.storage.make_many_atomic(
            keys, lambda index, path: _write_parquet(parts[index], path), pool
        )
        return [
            WrittenFile(table.name, key, part.num_rows, size, partition)
            for key, part, size, partition in zip(keys, parts, sizes, partitions, strict=True)
        ]

    def replace_partition(
        self, table_name: str, partition: str, rows: Iterable[Mapping[str, Any]]
    ) -> WrittenFile:
        """Put `rows` in place of everything one partition holds.

        The rows go to a new file and one atomic write of the partition's state hides the old
        files and shows the new one, so a reader sees the old set or the new one, never both
        or neither. Rows are not re-placed by their time column: the caller decides what the
        partition holds.
        """
        table = self.table(table_name)
        data = _to_parquet(to_arrow(table, list(rows)))
        key = f"{table.name}/{partition}/replaced-{uuid.uuid4().hex[:16]}.parquet"
        with self._lock(table.name, partition) as confirm:
            old = self.files(table_name, partition)
            self._swap(table.name, partition, old, key, data, confirm)
        count = pq.read_metadata(io.BytesIO(data)).num_rows
        return WrittenFile(table.name, key, count, len(data), partition)

    def _swap(
        self,
        table: str,
        partition: str,
        old: list[str],
        key: str,
        data: bytes,
        confirm: Callable[[], None],
    ) -> None:
        """Show `key` (written with `data`) and hide `old`, the last step being one atomic write.

        1. the state names `key` hidden; 2. `key` is written; 3. the state hides `old` and no
        longer `key`. Stopped after 1 or 2, the old set is what readers see, and the orphan is
        collected after the grace period. The caller holds the partition's lock and listed
        `old` under it; `confirm` stops the swap before a state write once the lock is lost.
        """
        hidden = self.hidden(table, partition)
        now = time.time()
        name = posixpath.basename(key)
        confirm()
        self._write_hidden(table, partition, {**hidden, name: now})
        self.storage.write_atomic(key, data)
        hidden.pop(name, None)
        hidden.update({posixpath.basename(k): now for k in old if k != key})
        confirm()
        self._write_hidden(table, partition, hidden)

    # -- visibility ---------------------------------------------------------------------
    def hidden(self, table_name: str, partition: str) -> dict[str, float]:
        """The files of one partition readers must not see, with when each was hidden."""
        key = f"{self.table(table_name).name}/{partition}/{HIDDEN_STATE}"
        try:
            data = self.storage.read(key)
        except FileNotFoundError:
            return {}
        return {str(k): float(v) for k, v in json.loads(data).get("hidden", {}).items()}

    def _write_hidden(self, table: str, partition: str, hidden: dict[str, float]) -> None:
        key = f"{table}/{partition}/{HIDDEN_STATE}"
        if not hidden:
            # No state object at all keeps the listing fast path for this partition.
            if self.storage.exists(key):
                self.storage.delete([key])
            return
        self.storage.write_atomic(key, json.dumps({"hidden": hidden}, sort_keys=True).encode())

    def collect_garbage(
        self, table_name: str, partition: str, grace_s: float = HIDDEN_GRACE_S
    ) -> list[str]:
        """Delete the partition's files hidden for longer than `grace_s`; the keys deleted."""
        table = self.table(table_name).name
        with self._lock(table, partition) as confirm:
            return self._collect_garbage(table, partition, grace_s, confirm)

    def _collect_garbage(
        self, table: str, partition: str, grace_s: float, confirm: Callable[[], None]
    ) -> list[str]:
        hidden = self.hidden(table, partition)
        now = time.time()
        expired = sorted(n for n, at in hidden.items() if now - at >= grace_s)
        if not expired:
            return []
        keys = [f"{table}/{partition}/{n}" for n in expired]
        # Deleted before they leave the state: stopped in between, the next run deletes again.
        confirm()
        self.storage.delete(keys)
        confirm()
        self._write_hidden(
            table, partition, {n: at for n, at in hidden.items() if n not in expired}
        )
        return keys

    # -- reading ------------------------------------------------------------------------
    def files(self, table_name: str, partition: str | None = None) -> list[str]:
        """The visible files: every Parquet file but those its partition's state hides.

        A listing is not a snapshot (S3 pages it, a large folder is read in parts), so one
        taken during a swap can hold a new file and miss the state written before it: the
        first swap of an hour creates that state, and such a listing alone looks like a
        partition with nothing hidden. A second listing, begun after the first ended, holds
        every state written before any file the first one listed; a listing is trusted only
        with the states that held from before it began until after that second listing.
        """
        table = self.table(table_name).name
        where = partition or "date=*/hour=*"
        listed = self.storage.glob(f"{table}/{where}/*")
        before = self._states(table, listed)
        if not before:
            check = self.storage.glob(f"{table}/{where}/*")
            if not any(posixpath.basename(k) == HIDDEN_STATE for k in check):
                return [k for k in listed if k.endswith(".parquet")]  # nothing replaced here
            before = self._states(table, check)
        while True:
            listed = self.storage.glob(f"{table}/{where}/*")
            after = self._states(table, self.storage.glob(f"{table}/{where}/*"))
            if after == before:
                break
            before = after
        hidden = {f"{d}/{n}" for d, names in after.items() for n in names}
        return [k for k in listed if k.endswith(".parquet") and k not in hidden]

    def _states(self, table: str, listed: list[str]) -> dict[str, dict[str, float]]:
        """Each listed partition folder with a state, and the files it hides."""
        folders = [posixpath.dirname(k) for k in listed if posixpath.basename(k) == HIDDEN_STATE]
        return {d: self.hidden(table, d.split("/", 1)[1]) for d in folders}

    def partitions(self, table_name: str) -> list[str]:
        return sorted({posixpath.dirname(k).split("/", 1)[1] for k in self.files(table_name)})

    def read(self, table_name: str, partition: str | None = None) -> pa.Table:
        table = self.table(table_name)
        parts = [
            pq.read_table(io.BytesIO(self.storage.read(k)))
            for k in self.files(table_name, partition)
        ]
        if not parts:
            return table.schema.empty_table()
        return pa.concat_tables([_conform(p, table.schema) for p in parts])

    # -- compaction ---------------------------------------------------------------------
    def compact(self, table_name: str, partition: str) -> Compaction:
        """Merge one hour's files into one, dropping rows whose id was already kept.

        Crash-safe and reader-safe: the merged file is shown and its inputs hidden in one
        atomic write (`_swap`); inputs are deleted by a compaction after the grace period.
        """
        table = self.table(table_name)
        keys = self.files(table_name, partition)
        if len(keys) <= 1 and not self.hidden(table.name, partition):
            # Nothing to merge and nothing hidden to delete (most hours of a run over every
            # hour): no lease taken. A swap after this look changes no result of this call.
            return self._unmerged(table.name, partition, keys)
        # Under the partition's lock from the listing to the swap: a reprocess swapping in
        # between would be undone by this merge of the files it replaced.
        with self._lock(table.name, partition) as confirm:
            return self._compact(table, partition, confirm)

    def _unmerged(self, table: str, partition: str, keys: list[str]) -> Compaction:
        rows = self.read(table, partition).num_rows if keys else 0
        size = self.storage.size(keys[0]) if keys else 0
        return Compaction(table, partition, len(keys), rows, size, 0)

    def _compact(self, table: LakeTable, partition: str, confirm: Callable[[], None]) -> Compaction:
        table_name = table.name
        self._collect_garbage(table_name, partition, HIDDEN_GRACE_S, confirm)
        keys = self.files(table_name, partition)
        self._finish_interrupted(table.name, partition, keys, confirm)
        keys = self.files(table_name, partition)
        if len(keys) <= 1:
            return self._unmerged(table_name, partition, keys)
        merged = self.read(table_name, partition)
        before = merged.num_rows
        merged = _dedupe(merged, table).sort_by(
            [(table.time_column, "ascending"), (table.id_column, "ascending")]
        )
        names = [posixpath.basename(k) for k in keys]
        digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]
        meta = {REPLACES_KEY: json.dumps(names).encode()}
        data = _to_parquet(merged.replace_schema_metadata(meta))
        target = f"{table.name}/{partition}/compacted-{digest}.parquet"
        self._swap(table.name, partition, keys, target, data, confirm)
        return Compaction(
            table.name, partition, len(keys), merged.num_rows, len(data), before - merged.num_rows
        )

    def _finish_interrupted(
        self, table: str, partition: str, keys: list[str], confirm: Callable[[], None]
    ) -> None:
        """Hide visible files a visible compacted file already holds.

        Older compactions deleted their inputs after writing; one stopped in between left
        both visible. Hiding them (not deleting) keeps the readers of either safe.
        """
        stale: list[str] = []
        for key in keys:
            if not posixpath.basename(key).startswith("compacted-"):
                continue
            meta = self.parquet_schema(key).metadata or {}
            replaced = set(json.loads(meta.get(REPLACES_KEY, b"[]")))
            stale += [k for k in keys if k != key and posixpath.basename(k) in replaced]
        if stale:
            hidden = self.hidden(table, partition)
            now = time.time()
            confirm()
            self._write_hidden(
                table, partition, {**hidden, **{posixpath.basename(k): now for k in stale}}
            )

    def parquet_schema(self, key: str) -> pa.Schema:
        """One file's schema and metadata, from its footer alone."""
        with self.storage.open(key) as handle:
            return pq.read_schema(handle)

    def file_schemas(self, table_name: str, partition: str) -> list[tuple[str, pa.Schema]]:
        """The Parquet schema of each file of one partition (for the schema check)."""
        return [(key, self.parquet_schema(key)) for key in self.files(table_name, partition)]

    # -- dimensions -------------------------------------------------------------------------
    @staticmethod
    def dimension(name: str) -> Dimension:
        try:
            return DIMENSIONS[name]
        except KeyError:
            raise StorageError(f"unknown lake dimension {name!r}") from None

    def write_dimension(
        self, name: str, rows: Iterable[Mapping[str, Any]], day: str
    ) -> WrittenFile:
        """Replace the snapshot of one dimension for one UTC day (``YYYY-MM-DD``)."""
        spec = self.dimension(name)
        rows = list(rows)
        data = _to_parquet(to_arrow(spec, rows))
        key = f"{spec.name}/date={day}/{spec.name}.parquet"
        self.storage.write_atomic(key, data)
        return WrittenFile(spec.name, key, len(rows), len(data), f"date={day}")

    def dimension_files(self, name: str) -> list[str]:
        return self.storage.glob(f"{self.dimension(name).name}/date=*/*.parquet")

    # -- DuckDB ---------------------------------------------------------------------------
    def scope_view(
        self, con: duckdb.DuckDBPyConnection, table_name: str, partition: str, view: str
    ) -> None:
        """`view` on `con`: one table's rows of one partition only (an empty table if none)."""
        table = self.table(table_name)
        keys = self.files(table_name, partition)
        if keys:
            uris = ", ".join(_quote(self.storage.uri(k)) for k in keys)
            con.execute(
                f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM read_parquet([{uris}], "
                "union_by_name = true)"
            )
            return
        empty = table.schema.empty_table()  # noqa: F841 - read by name below
        con.execute(f"CREATE OR REPLACE TABLE {view} AS SELECT * FROM empty")

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with one view per lake table and dimension.

        The analysts' entry point: each history table by its name; each dimension by its
        name (the latest daily snapshot) and as ``<name>_history`` (every day's snapshot);
        ``changes.status`` reads ``delivered`` once ``change_deliveries`` says so (the
        status the row was written with stays as ``status_at_write``).
        """
        con = self.duckdb()
        for name, table in TABLES.items():
            source = "changes_written" if name == "changes" else name
            keys = self.files(name)
            if name == "observations":
                self._latest_view(con, keys)
            if keys:
                self._view(con, source, table.schema, keys)
                if table.daily_state:
                    # `entities`: the view is the latest day; every day stays as `_by_day`.
                    latest = self.partitions(name)[-1]
                    con.execute(f"ALTER VIEW {source} RENAME TO {source}_by_day")
                    self._view(con, source, table.schema, self.files(name, latest))
            else:
                _empty_table(con, source, table.schema, "NULL::DATE AS date, NULL::INTEGER AS hour")
        for name in DIMENSIONS:
            self._dimension_views(con, name)
        con.execute(
            "CREATE VIEW changes AS SELECT c.* REPLACE ("
            "CASE WHEN d.change_id IS NOT NULL THEN 'delivered' ELSE c.status END AS status), "
            "c.status AS status_at_write, d.delivered_at "
            "FROM changes_written c LEFT JOIN change_deliveries d USING (change_id)"
        )
        return con

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection that reads this lake's files (no views)."""
        con = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        if self.storage.is_s3:
            # No httpfs offline: DuckDB reads s3:// through the registered fsspec filesystem.
            con.register_filesystem(self.storage.fs)
        return con

    def _latest_view(self, con: duckdb.DuckDBPyConnection, observation_keys: list[str]) -> None:
        """`latest_observations`: each sensor's latest observation (`resources/lake_latest.py`)."""
        query = lake_latest.source_sql(self, con, observation_keys)
        if query is None:
            _empty_table(con, "latest_observations", lake_latest.SCHEMA, "")
        else:
            con.execute(f"CREATE VIEW latest_observations AS {query}")

    def update_latest(self, grace_s: float = HIDDEN_GRACE_S) -> lake_latest.LatestUpdate:
        """Fold the observation files written since into the kept latest-observation table."""
        return lake_latest.update(self, grace_s)

    def _view(
        self,
        con: duckdb.DuckDBPyConnection,
        view: str,
        schema: pa.Schema,
        keys: list[str],
    ) -> None:
        """`view` over the files `keys` of a partitioned table (`source_sql`)."""
        con.execute(f"CREATE VIEW {view} AS {self.source_sql(con, schema, keys)}")

    def source_sql(
        self,
        con: duckdb.DuckDBPyConnection,
        schema: pa.Schema,
        keys: list[str],
        *,
        hive: bool = True,
        filename: bool = False,
    ) -> str:
        """A query over the files `keys` (at least one), with every column `schema` declares.

        The view names its files rather than a glob: a glob would also match the files a
        replacement hid (and the new one before it is shown), so the connection keeps the
        set it was opened with, which stays on disk for `HIDDEN_GRACE_S`.

        Files written before a column was added lack it; `union_by_name` fills it in while
        any file has it, and until one does the view still has it, NULL, so queries written
        for the current schema run on an older lake.
        """
        uris = ", ".join(_quote(self.storage.uri(k)) for k in keys)
        partitioning = (
            "hive_partitioning = true, hive_types = {'date': DATE, 'hour': INTEGER}"
            if hive
            else "hive_partitioning = false"
        )
        named = ", filename = true" if filename else ""  # each row's file, as `filename`
        source = f"read_parquet([{uris}], {partitioning}, union_by_name = true{named})"
        # The newest file is written by the current code: only when it lacks a column is
        # the union of every file's columns read.
        newest = self.parquet_schema(max(keys)).names
        present = set(newest)
        if not set(schema.names) <= present:
            present = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        missing = pa.schema([f for f in schema if f.name not in present])
        typed = ", ".join(
            f"{c}::JSON AS {c}" for c in schema.names if c in JSON_COLUMNS and c in present
        )
        replace = f" REPLACE ({typed})" if typed else ""
        nulls = "".join(
            f", NULL::{'JSON' if f.name in JSON_COLUMNS else duck_type} AS {f.name}"
            for f, duck_type in zip(missing, _duckdb_types(con, missing), strict=True)
        )
        return f"SELECT *{replace}{nulls} FROM {source}"

    def _dimension_views(self, con: duckdb.DuckDBPyConnection, name: str) -> None:
        spec = self.dimension(name)
        keys = self.dimension_files(name)
        if not keys:
            _empty_table(con, f"{name}_history", spec.schema, "NULL::DATE AS date")
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_history")
            return
        glob = self.storage.uri(f"{spec.name}/date=*/*.parquet")
        con.execute(
            f"CREATE VIEW {name}_history AS SELECT * FROM read_parquet('{glob}', "
            "hive_partitioning = true, union_by_name = true, hive_types = {'date': DATE})"
        )
        # The latest day is known from the listing: the view reads one file, not every day.
        con.execute(
            f"CREATE VIEW {name} AS SELECT * FROM read_parquet("
            f"'{self.storage.uri(max(keys))}', union_by_name = true)"
        )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _empty_table(
    con: duckdb.DuckDBPyConnection, name: str, schema: pa.Schema, partition_columns: str
) -> None:
    empty = schema.empty_table()  # noqa: F841 - read by name below
    replace = _json_replace(schema)
    extra = f", {partition_columns}" if partition_columns else ""
    con.execute(f"CREATE TABLE {name} AS SELECT *{replace}{extra} FROM empty")


def _duckdb_types(con: duckdb.DuckDBPyConnection, schema: pa.Schema) -> list[str]:
    """The DuckDB type of each column of an Arrow schema, as DuckDB itself maps it."""
    if not schema:
        return []
    empty = schema.empty_table()  # noqa: F841 - read by name below
    return [row[1] for row in con.execute("DESCRIBE SELECT * FROM empty").fetchall()]


def _json_replace(schema: pa.Schema) -> str:
    """The REPLACE clause typing a table's JSON text columns as JSON (`->>`, JSON output)."""
    typed = ", ".join(f"{c}::JSON AS {c}" for c in schema.names if c in JSON_COLUMNS)
    return f" REPLACE ({typed})" if typed else ""


def _conform(part: pa.Table, schema: pa.Schema) -> pa.Table:
    """A file written before a column was added reads with that column null."""
    columns = [
        part.column(f.name) if f.name in part.column_names else pa.nulls(part.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema).cast(schema)


def _to_parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    _write_parquet(table, sink)
    return sink.getvalue()


def _write_parquet(table: pa.Table, where: str | io.BytesIO) -> None:
    """`table` as one Parquet file at a local path or into a buffer, the lake's encodings."""
    dictionary, statistics = parquet_encodings(tuple(table.schema.names))
    pq.write_table(
        table,
        where,
        compression="zstd",
        row_group_size=1_000_000,
        use_dictionary=dictionary,
        write_statistics=statistics,
    )


_KEPT_IDS = frozenset({"sensor_id", "company_id", "webpage_id", "run_id"})


@lru_cache(maxsize=64)
def parquet_encodings(names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The columns worth a dictionary, and those worth min/max statistics.

    A content hash, an object key, a URL or a JSON document is all but unique in a file:
    a dictionary is tried and dropped, and min/max prune nothing. Row ids stay without a
    dictionary but keep statistics: they begin with their time, so a row group's range is
    narrow. (12 % less encoding CPU for an hour of observations, and smaller files.)
    """
    unique = {
        n for n in names if n.endswith(("_hash", "_key")) or n in _UNIQUE_TEXT or n in JSON_COLUMNS
    }
    ids = {n for n in names if n.endswith("_id") and n not in _KEPT_IDS}
    return [n for n in names if n not in unique | ids], [n for n in names if n not in unique]


_UNIQUE_TEXT = frozenset({"url", "final_url", "etag", "last_modified"})


def _dedupe(table: pa.Table, spec: LakeTable) -> pa.Table:
    seen: set[str] = set()
    keep = []
    for index, row_id in enumerate(table.column(spec.id_column).to_pylist()):
        if row_id not in seen:
            seen.add(row_id)
            keep.append(index)
    return table if len(keep) == table.num_rows else table.take(keep)
