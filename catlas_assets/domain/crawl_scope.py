"""Which URLs a site crawl may touch (spec 003): ConfigScope and PathScope, pure.

ConfigScope has one predicate, `is_allowed_domain`, over a URL's authority (what
`urlsplit` calls the netloc). The database side never renders the rules in SQL: it reads
the distinct `webpages.host` values and keeps those the predicate accepts (`hosts_in`).
PathScope is one anchored regex: the registrable domain of the config's base URL plus
its subdomains, then the path prefix bound at a segment boundary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from catlas_assets.domain.urls import registrable_domain
from catlas_assets.errors import CatlasError, CrawlScopeError


def default_allowed_domains(base_url: str) -> list[str]:
    """The registrable domain of the base URL and its subdomains (any port, any userinfo)."""
    domain = registrable_domain(base_url)
    return [rf"^([^@/]*@)?([a-z0-9-]+\.)*{re.escape(domain)}(:\d+)?$"]


def authority(url: str) -> str:
    return urlsplit(url).netloc


@dataclass(frozen=True)
class ConfigScope:
    allowed_domains: tuple[str, ...]
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            compiled = tuple(re.compile(rule, re.IGNORECASE) for rule in self.allowed_domains)
        except re.error as exc:
            raise CatlasError(f"bad allowed-domain rule: {exc}") from None
        object.__setattr__(self, "_compiled", compiled)

    def is_allowed_domain(self, netloc: str | None) -> bool:
        if not netloc:
            return False  # no authority: outside every scope, as the NULL host column says
        return any(rule.search(netloc) for rule in self._compiled)

    def allows(self, url: str) -> bool:
        return self.is_allowed_domain(authority(url))

    def hosts_in(self, hosts: Iterable[str | None]) -> list[str]:
        """The hosts present in the queue that this config admits (a `host IN (...)` list)."""
        return sorted({h for h in hosts if h and self.is_allowed_domain(h)})


@dataclass(frozen=True)
class PathScope:
    path: str
    base_url: str
    pattern: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.path or not self.path.strip():
            raise CrawlScopeError("a path scope needs a non-empty path")
        path = self.path.strip()
        if not path.startswith("/"):
            path = "/" + path
        if path != "/":
            path = path.rstrip("/")
        domain = re.escape(registrable_domain(self.base_url))
        prefix = "" if path == "/" else re.escape(path)
        # Portable between Python's re and PostgreSQL's regex: no lookaround, fully anchored.
        pattern = (
            rf"^[a-z][a-z0-9+.-]*://([^/?#@]*@)?([a-z0-9-]+\.)*{domain}(:[0-9]+)?"
            rf"{prefix}([/?#].*)?$"
        )
        object.__setattr__(self, "pattern", pattern)

    def matches(self, url: str) -> bool:
        return re.match(self.pattern, url, re.IGNORECASE | re.DOTALL) is not None

    def seed(self) -> str:
        """The run's seed: the config's base URL joined with the path, checked loudly."""
        base = urlsplit(self.base_url)
        raw = self.path.strip()
        seed = raw if "://" in raw else f"{base.scheme}://{base.netloc}/{raw.lstrip('/')}"
        if not self.matches(seed):
            raise CrawlScopeError(f"the seed {seed} is outside path scope {self.path!r}")
        return seed


@dataclass(frozen=True)
class CrawlScope:
    """The config scope, intersected with a path scope when the run has one."""

    config: ConfigScope
    path: PathScope | None = None

    def allows(self, url: str) -> bool:
        return self.config.allows(url) and (self.path is None or self.path.matches(url))

    def require(self, url: str) -> str:
        if not self.allows(url):
            raise CrawlScopeError(
                f"{url} is outside the config's scope; edit the config's allowed domains"
                " to crawl it"
            )
        return url
