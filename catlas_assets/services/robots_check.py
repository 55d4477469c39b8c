"""`catlas robots check URL`: would catlas fetch this URL, and which robots.txt rule says so."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain.robots import Decision
from catlas_assets.domain.urls import check_url
from catlas_assets.services import event_loop
from catlas_assets.services.runtime import Runtime
from resources.robots_gate import RobotsEntry


@dataclass(frozen=True)
class RobotsCheck:
    url: str
    agent: str
    entry: RobotsEntry
    decision: Decision | None  # None when robots.txt is unavailable (the fetch is postponed)

    @property
    def allowed(self) -> bool:
        return self.decision is not None and self.decision.allowed

    def lines(self) -> list[str]:
        entry = self.entry
        if self.decision is None:
            return [
                f"postponed: robots.txt unavailable ({entry.unavailable}); catlas fetches "
                f"nothing from this origin until {entry.expires_at:%Y-%m-%d %H:%M}Z"
            ]
        out = [self.decision.describe()]
        if entry.status is not None and not 200 <= entry.status < 300:
            out.append(f"robots.txt answered HTTP {entry.status}: no rules apply")
        else:
            out.append(f"robots.txt: {entry.source_url}")
        delay = entry.robots.crawl_delay(self.agent)
        if delay is not None:
            out.append(f"crawl-delay: {delay:g} s")
        out.extend(f"sitemap: {url}" for url in entry.robots.sitemaps)
        return out


def check_robots(runtime: Runtime, url: str, agent: str | None = None) -> RobotsCheck:
    url = check_url(url)
    agent = agent or runtime.settings.user_agent

    async def go() -> RobotsEntry:
        async with runtime.fetcher(governed=False, one_off=True) as fetcher:
            return await fetcher.robots_for(url)

    entry = event_loop.run(go())
    decision = None if entry.unavailable else entry.robots.decide(url, agent)
    return RobotsCheck(url, agent, entry, decision)
