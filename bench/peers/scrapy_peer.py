"""Scrapy over the page set: fetch, parse with selectolax, extract the text, sha256 it.

    python bench/peers/scrapy_peer.py TARGETS.json [--concurrency 64 --per-host 8]

robots.txt is obeyed (as catlas obeys it), no download delay, cookies and the rest at
Scrapy's defaults. Hosts resolve to 127.0.0.1 through a fixed resolver (nothing else does).
The time is the crawl's, from the engine's start to the spider's close.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from typing import Any

import scrapy
from common import emit, targets
from scrapy import signals
from scrapy.crawler import CrawlerProcess
from selectolax.lexbor import LexborHTMLParser
from twisted.internet import defer
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

HOSTS: set[str] = set()


@implementer(IResolverSimple)
class LoopbackResolver:
    """Every benchmark host is 127.0.0.1; any other name fails like a missing DNS entry."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> LoopbackResolver:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred:
        if name in HOSTS or name == "127.0.0.1":
            return defer.succeed("127.0.0.1")
        return defer.fail(OSError(f"{name} is not a benchmark host"))


class Pages(scrapy.Spider):
    name = "pages"

    def __init__(self, urls: list[str], stats: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Pages:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.closed_, signal=signals.spider_closed)
        return spider

    def opened(self, spider: Any) -> None:
        self.stats["started"] = time.perf_counter()

    def closed_(self, spider: Any) -> None:
        self.stats["ended"] = time.perf_counter()

    async def start(self):
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response: Any) -> None:
        tree = LexborHTMLParser(response.body)
        for node in tree.css("script, style"):
            node.decompose()
        text = tree.body.text(separator=" ", strip=True) if tree.body else ""
        hashlib.sha256(text.encode()).hexdigest()
        self.stats["pages"] = self.stats.get("pages", 0) + 1
        self.stats["bytes"] = self.stats.get("bytes", 0) + len(response.body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("targets")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--per-host", type=int, default=8)
    args = parser.parse_args()
    pages = targets(args.targets)
    HOSTS.update(p["host"] for p in pages)
    stats: dict[str, Any] = {}
    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": args.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.per_host,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": True,
            "DNS_RESOLVER": f"{__name__}.LoopbackResolver",
            "LOG_LEVEL": os.environ.get("BENCH_SCRAPY_LOG", "WARNING"),
            "TELNETCONSOLE_ENABLED": False,
            "HTTPCACHE_ENABLED": False,
            "RETRY_ENABLED": False,
        }
    )
    process.crawl(Pages, urls=[p["url"] for p in pages], stats=stats)
    process.start()
    seconds = stats["ended"] - stats["started"]
    emit(
        {
            "pages": stats.get("pages", 0),
            "bytes": stats.get("bytes", 0),
            "seconds": seconds,
            "pages_per_s": stats.get("pages", 0) / seconds,
            "scrapy": scrapy.__version__,
        }
    )


if __name__ == "__main__":
    main()
