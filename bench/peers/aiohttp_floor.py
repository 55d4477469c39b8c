"""The raw floor: aiohttp GETs of every page, no parsing, no storing.

    python bench/peers/aiohttp_floor.py TARGETS.json --concurrency 64 [--conditional]

With --conditional, one untimed plain pass collects each page's ETag, then the timed pass
sends If-None-Match and gets 304 for every page: the cost of a conditional recheck with
nothing else done. Hosts resolve to 127.0.0.1 through a fixed resolver (nothing else does).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import time
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver
from common import emit, targets


class Loopback(AbstractResolver):
    """Every benchmark host is 127.0.0.1; any other name fails like a missing DNS entry."""

    def __init__(self, hosts: set[str]) -> None:
        self.hosts = hosts

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[Any]:
        if host not in self.hosts:
            raise OSError(f"{host} is not a benchmark host")
        return [{"hostname": host, "host": "127.0.0.1", "port": port, "family": socket.AF_INET,
                 "proto": 0, "flags": socket.AI_NUMERICHOST}]  # fmt: skip

    async def close(self) -> None:
        return None


async def run(pages: list[dict[str, str]], concurrency: int, conditional: bool) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(
        limit=concurrency, limit_per_host=8, resolver=Loopback({p["host"] for p in pages})
    )
    async with aiohttp.ClientSession(connector=connector) as session:
        etags: dict[str, str] = {}
        statuses: dict[int, int] = {}
        queue: asyncio.Queue[dict[str, str]] = asyncio.Queue()

        async def worker(headers_of) -> None:
            while not queue.empty():
                page = queue.get_nowait()
                async with session.get(page["url"], headers=headers_of(page)) as resp:
                    await resp.read()
                    statuses[resp.status] = statuses.get(resp.status, 0) + 1
                    if "ETag" in resp.headers:
                        etags[page["url"]] = resp.headers["ETag"]

        async def one_pass(headers_of) -> float:
            for page in pages:
                queue.put_nowait(page)
            started = time.perf_counter()
            await asyncio.gather(*(worker(headers_of) for _ in range(concurrency)))
            return time.perf_counter() - started

        if conditional:
            await one_pass(lambda page: {})
            statuses.clear()
            seconds = await one_pass(lambda page: {"If-None-Match": etags[page["url"]]})
        else:
            seconds = await one_pass(lambda page: {})
    return {
        "requests": len(pages),
        "seconds": seconds,
        "req_per_s": len(pages) / seconds,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "concurrency": concurrency,
        "conditional": conditional,
        "aiohttp": aiohttp.__version__,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("targets")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--conditional", action="store_true")
    args = parser.parse_args()
    emit(asyncio.run(run(targets(args.targets), args.concurrency, args.conditional)))


if __name__ == "__main__":
    main()
