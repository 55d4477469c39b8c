"""Move committed lake rows from the state store's outbox into Parquet.

Why an outbox: a sensor run commits its new state and its lake rows in one database
transaction, so a process that dies afterwards loses nothing (the rows wait in the
outbox) and a process that dies before it leaves no trace. A flush stamps a group of
outbox rows with a flush id, writes each table's rows as ``part-<flush id>.parquet``
(atomically), then deletes the group. If it dies between the write and the delete, the
next flush finds the stamped group and writes it again under the same names: the files
are replaced, never duplicated.
"""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa

from catlas_assets.ids import new_id
from catlas_assets.services.runtime import Runtime
from resources.lake import Lake, WrittenFile
from resources.lake_batches import to_arrow, unpack


def flush(runtime: Runtime, *, run_id: str | None = None) -> list[WrittenFile]:
    store, lake = runtime.store, runtime.lake
    flush_id = new_id("fl", runtime.clock.now())
    written: list[WrittenFile] = []
    for group_id, payloads in store.take_outbox(flush_id, run_id=run_id):
        # A commit group's rows come as Arrow tables already; JSON rows (discovery's, a
        # site crawl's, those of an older catlas) are converted here.
        tables: dict[str, list[pa.Table]] = defaultdict(list)
        for payload in payloads:
            if isinstance(payload, bytes):
                for table, data in unpack(payload).items():
                    tables[table].append(data)
            else:
                for table, rows in payload.items():
                    tables[table].append(to_arrow(Lake.table(table), rows))
        for table, parts in sorted(tables.items()):
            data = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
            written.extend(lake.write_arrow(table, data, batch_id=group_id))
        store.drop_outbox(group_id)
    return written
