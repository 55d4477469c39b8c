"""The daily `change_feed` asset: the Atom feed of changes, refreshed in the lake."""

import dagster as dg

from catlas_assets.defs.partitions import daily_partitions
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.change_feed import FEED_KEY, refresh_lake_feed


@dg.asset(
    name="change_feed",
    group_name="lake",
    partitions_def=daily_partitions,
    deps=["changes", "companies", "sensors"],
    kinds={"atom"},
    description=(
        f"An Atom 1.0 feed of every meaningful-or-above change (`{FEED_KEY}` in the lake), "
        "one entry per change with a stable id; the same document as `catlas feed`."
    ),
)
def change_feed(catlas: CatlasResource) -> dg.MaterializeResult:
    feed = refresh_lake_feed(catlas.runtime)
    return dg.MaterializeResult(
        metadata={
            "entries": dg.MetadataValue.int(feed.entries),
            "bytes": dg.MetadataValue.int(len(feed.document)),
            "location": catlas.runtime.storage.uri(FEED_KEY),
        }
    )


defs = dg.Definitions(assets=[change_feed])
