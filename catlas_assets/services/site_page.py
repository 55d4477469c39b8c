"""One URL of a site crawl: fetch it (or not), store its bytes, process, follow its links.

Per URL the mode decides how much work to do (spec 003): without force-fetch a page that
already has an extracted file is not fetched; with it, a content-hash match on an
extracted file skips processing. Every processed URL commits its row, one run event (two
for a followed redirect) and its lake rows in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from catlas_assets.domain.content_address import archive_key
from catlas_assets.domain.crawl_events import baseline_of, transition
from catlas_assets.domain.crawl_modes import ModeSpec
from catlas_assets.domain.crawl_scope import CrawlScope
from catlas_assets.domain.extract.extraction import Extraction
from catlas_assets.domain.lake_rows import observation_row, validators
from catlas_assets.domain.normalize import Block, sha256_hex
from catlas_assets.domain.page_links import extract_links
from catlas_assets.domain.page_rows import EVENT_OF, kept_state, page_rows, page_state
from catlas_assets.domain.pipeline_data import Fetched, InboxEntry
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import (
    CrawlStatus,
    FailureClass,
    Outcome,
    PageEvent,
    ProcessingStatus,
)
from catlas_assets.ids import new_id
from catlas_assets.services.runtime import Runtime
from resources.fetcher import Fetcher
from resources.state import site_crawl_store as pages

Row = dict[str, Any]
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass
class CrawlState:
    """One site-crawl run as its pages see it, and what they did."""

    runtime: Runtime
    run_id: str
    spec: ModeSpec
    config: Row
    scope: CrawlScope
    seed: str | None = None
    events: Counter[PageEvent] = field(default_factory=Counter)
    seen: set[int] = field(default_factory=set)
    fetched_seed: bool = False
    seed_yielded: bool = False
    requests: int = 0
    postponed: str = ""  # politeness ended the run (a domain budget, robots.txt unavailable)
    budget_spent: bool = False  # the run's own request budget (-n) postponed a fetch
    robots_skips: int = 0
    answered: int = 0  # URLs that got an answer other than robots.txt's refusal
    # Rows written to `observations`: fewer than events, since a redirect's origin and a page
    # already extracted (not fetched) write none.
    observations: int = 0
    on_event: Callable[[PageEvent], None] | None = None

    @property
    def config_name(self) -> str:
        return str(self.config["name"])


async def crawl_row(
    state: CrawlState, fetcher: Fetcher, row: Row, budget: int | None
) -> Fetched | None:
    """Crawl one CRAWLING row; returns what was fetched (None when nothing was)."""
    spec = state.spec
    # A row whose last crawl failed is fetched again, whatever file an earlier success left.
    if not spec.force_fetch and row["object_key"] and row["failure_class"] is None:
        if row["processing_status"] == ProcessingStatus.EXTRACTED:
            await _commit(state, row, PageEvent.UNCHANGED, {"crawl_status": CrawlStatus.CRAWLED},
                          detail="already extracted")  # fmt: skip
        else:
            await process_stored(state, row, fresh=False, crawled=True)  # no download
        return None
    conditional = (
        not spec.skip_hash_check and row["processing_status"] == ProcessingStatus.EXTRACTED
    )
    fetched = await fetcher.fetch(
        row["url"],
        etag=row["etag"] if conditional else None,
        last_modified=row["last_modified"] if conditional else None,
        domain=registrable_domain(row["url"]),
        max_requests=budget,
        follow=state.scope.allows,
    )
    state.requests += fetched.requests
    if fetched.skipped_reason:
        await asyncio.to_thread(_requeue, state, row)
        if fetched.skipped_reason == "request_budget":
            state.budget_spent = True
        else:
            state.postponed = f"{fetched.skipped_reason}: {fetched.failure_detail}".strip(": ")
        return fetched
    if fetched.failure_class is FailureClass.ROBOTS:
        state.robots_skips += 1
        await _commit(state, row, PageEvent.SKIPPED,
                      {"crawl_status": CrawlStatus.SKIPPED, "skip_reason": "robots.txt disallows"},
                      detail="robots.txt disallows")  # fmt: skip
        return fetched
    state.answered += 1
    if fetched.failure_class is None and fetched.final_url != row["url"]:
        await _redirected(state, row, fetched)
    else:
        await _answered(state, row, fetched)
    return fetched


def _requeue(state: CrawlState, row: Row) -> None:
    pages.commit_page(
        state.runtime.store, page_id=row["id"], update_values={"crawl_status": CrawlStatus.PENDING},
        events=[], lake_rows={}, run_id=state.run_id, now=state.runtime.clock.now(),
    )  # fmt: skip


async def _redirected(state: CrawlState, row: Row, fetched: Fetched) -> None:
    final = fetched.final_url
    if not state.scope.allows(final):
        reason = f"redirects out of scope to {final}"
        await _commit(state, row, PageEvent.SKIPPED,
                      {"crawl_status": CrawlStatus.SKIPPED, "skip_reason": reason, "redirects_to": None},
                      detail=reason)  # fmt: skip
        return
    now = state.runtime.clock.now()
    await asyncio.to_thread(pages.insert_urls, state.runtime.store, [final], now)
    await _commit(state, row, PageEvent.REDIRECTED,
                  {"crawl_status": CrawlStatus.CRAWLED, "redirects_to": final}, detail=final)  # fmt: skip
    target = await asyncio.to_thread(pages.page_by_url, state.runtime.store, final)
    if target is None or target["id"] in state.seen or fetched.status in REDIRECT_STATUSES:
        return  # not followed here (another domain): the drain fetches it in its turn
    state.seen.add(target["id"])
    await _answered(state, target, fetched)


async def _answered(state: CrawlState, row: Row, fetched: Fetched) -> None:
    """A fetch that came back (a failure, a 304 or a body) for `row`, at `fetched.final_url`."""
    if row["url"] == state.seed:
        state.fetched_seed = fetched.failure_class is None
    if (
        fetched.failure_class is None
        and not fetched.not_modified
        and not state.spec.skip_hash_check
    ):
        same = sha256_hex(fetched.body) == row["content_hash"]
        if same and row["processing_status"] == ProcessingStatus.EXTRACTED:
            await _hash_match(state, row, fetched)
            return
    if fetched.failure_class is None and not fetched.not_modified:
        await asyncio.to_thread(state.runtime.archive.put, fetched.body)
    await _observe_and_commit(state, row, fetched, fresh=state.spec.skip_hash_check)


async def _hash_match(state: CrawlState, row: Row, fetched: Fetched) -> None:
    """Re-fetched, byte for byte what was processed: recorded, never re-processed."""
    now = state.runtime.clock.now()
    sensor = page_state(row, state.config, url=fetched.final_url)
    obs = observation_row(
        sensor, fetched, observation_id=new_id("obs", now), run_id=state.run_id, now=now
    )
    obs.update(validators(fetched), outcome=Outcome.UNCHANGED, content_hash=row["content_hash"],
               normalized_hash=row["normalized_hash"], structured_hash=row["structured_hash"],
               object_key=row["object_key"])  # fmt: skip
    if row["url"] == state.seed:
        state.seed_yielded = True  # an unchanged listing still lists what it listed
    await _commit(state, row, PageEvent.UNCHANGED,
                  {"crawl_status": CrawlStatus.CRAWLED, **validators(fetched)},
                  rows=page_rows({"observations": [obs]}, row["id"], state.config_name),
                  detail="content hash unchanged")  # fmt: skip


async def _observe_and_commit(
    state: CrawlState, row: Row, fetched: Fetched, *, fresh: bool
) -> None:
    runtime = state.runtime
    previous, extraction = await asyncio.to_thread(_previous, runtime, row)
    now = runtime.clock.now()
    # In the observe pool, as a sensor's: pages in flight keep the loop free, so each
    # request goes out when the governor's spacing lets it, not when a parse ends.
    observed = await runtime.observe_pool.observe(
        sensor=page_state(row, state.config, url=fetched.final_url, fresh=fresh),
        fetched=fetched,
        previous_blocks=previous,
        previous_extraction=extraction,
        now=now,
        run_id=state.run_id,
        observation_id=new_id("obs", now),
        policy=runtime.policy,
        rng=random.Random(row["id"]),
    )
    for data in observed.objects.values():
        await asyncio.to_thread(runtime.archive.put, data)
    event = EVENT_OF[observed.outcome]
    update: Row = {"crawl_status": CrawlStatus.CRAWLED, **kept_state(observed.sensor_update)}
    detail = observed.summary[:300]
    if fetched.failure_class is not None:
        update.update(crawl_status=CrawlStatus.CRAWL_FAILED, failure_class=fetched.failure_class,
                      failure_detail=fetched.failure_detail[:500])  # fmt: skip
    elif not fetched.not_modified:
        update.update(content_hash=sha256_hex(fetched.body), object_key=archive_key(fetched.body),
                      content_type=fetched.content_type[:200], failure_class=None, failure_detail=None,
                      processing_status=ProcessingStatus.FAILED if event is PageEvent.FAILED
                      else ProcessingStatus.EXTRACTED)  # fmt: skip
        await _follow_links(state, row, fetched)
    elif row["url"] == state.seed:
        state.seed_yielded = True
    await _commit(state, row, event, update,
                  rows=page_rows(observed.rows, row["id"], state.config_name), detail=detail,
                  inbox=observed.inbox)  # fmt: skip


async def _follow_links(state: CrawlState, row: Row, fetched: Fetched) -> None:
    if not state.spec.extracts_links or "html" not in fetched.content_type:
        return
    found = await asyncio.to_thread(
        extract_links, fetched.body, fetched.content_type, fetched.final_url
    )
    inside = [u for u in dict.fromkeys(found.all_urls()) if state.scope.allows(u)]
    if row["url"] == state.seed and inside:
        state.seed_yielded = True
    if inside:
        # Out-of-scope links are never recorded: no stranded PENDING rows.
        await asyncio.to_thread(
            pages.insert_urls, state.runtime.store, inside, state.runtime.clock.now()
        )


def _previous(runtime: Runtime, row: Row) -> tuple[list[Block] | None, Extraction | None]:
    if not row["blocks_key"]:
        return None, None
    blocks = [Block(**item) for item in json.loads(runtime.archive.get(row["blocks_key"]))]
    extraction = (
        Extraction.from_json(runtime.archive.get(row["extraction_key"]))
        if row["extraction_key"]
        else None
    )
    return blocks, extraction


async def process_stored(
    state: CrawlState, row: Row, *, fresh: bool, crawled: bool = False
) -> None:
    """Re-run processing from the stored raw bytes (no fetching), guarded hand-off."""
    store = state.runtime.store
    if not await asyncio.to_thread(pages.flip_processing, store, row["id"], row, state.run_id):
        return  # a worker advanced it meanwhile
    try:
        body = await asyncio.to_thread(state.runtime.archive.get, row["object_key"])
    except Exception:
        # Failed before the hand-off: the file keeps its prior status for a later re-run.
        await asyncio.to_thread(pages.restore_processing, store, row["id"], row, state.run_id)
        raise
    fetched = Fetched(url=row["url"], final_url=row["url"], status=200,
                      headers={"content-type": row["content_type"] or "text/html"}, body=body,
                      elapsed_ms=0, requests=0)  # fmt: skip
    current = {**row, "processing_status": ProcessingStatus.PROCESSING, "last_run_id": state.run_id}
    previous, extraction = await asyncio.to_thread(_previous, state.runtime, row)
    now = state.runtime.clock.now()
    observed = await state.runtime.observe_pool.observe(
        sensor=page_state(row, state.config, fresh=fresh), fetched=fetched,
        previous_blocks=previous, previous_extraction=extraction, now=now, run_id=state.run_id,
        observation_id=new_id("obs", now), policy=state.runtime.policy,
        rng=random.Random(row["id"]),
    )  # fmt: skip
    for data in observed.objects.values():
        await asyncio.to_thread(state.runtime.archive.put, data)
    event = EVENT_OF[observed.outcome]
    status = ProcessingStatus.FAILED if event is PageEvent.FAILED else ProcessingStatus.EXTRACTED
    done = {"crawl_status": CrawlStatus.CRAWLED} if crawled else {}
    # Every row processing derived, its observation included: no snapshot without one.
    await _commit(state, current, event,
                  {"processing_status": status, **done, **kept_state(observed.sensor_update)},
                  rows=page_rows(observed.rows, row["id"], state.config_name),
                  detail=observed.summary[:300], inbox=observed.inbox,
                  only_if_processing=True)  # fmt: skip


async def _commit(
    state: CrawlState,
    row: Row,
    event: PageEvent,
    update: Row,
    *,
    rows: dict[str, list[Row]] | None = None,
    detail: str = "",
    inbox: Sequence[InboxEntry] = (),
    only_if_processing: bool = False,
) -> None:
    now = state.runtime.clock.now()
    change = transition(row["last_outcome"], event)
    baseline = baseline_of(event)
    values = {**update, "last_run_id": state.run_id}
    if baseline is not None:
        values["last_outcome"] = baseline
        values["last_crawled_at"] = now
    record = {"run_id": state.run_id, "webpage_id": row["id"], "url": row["url"], "event": event.value,
              "transition": change.value if change else None, "detail": detail or None, "at": now}  # fmt: skip
    lake = dict(rows or {})
    lake["run_events"] = [{**record, "event_id": new_id("evt", now), "sensor_id": None}]
    committed = await asyncio.to_thread(
        pages.commit_page, state.runtime.store, page_id=row["id"], update_values=values,
        events=[record], lake_rows=lake, run_id=state.run_id, now=now, inbox=inbox,
        only_if_processing=only_if_processing,
    )  # fmt: skip
    if committed:
        row.update(values)
        state.events[event] += 1
        state.observations += len(lake.get("observations") or [])
        if state.on_event is not None:
            state.on_event(event)
