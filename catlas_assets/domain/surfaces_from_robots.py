"""Surfaces a site's robots.txt names: discovery method `robots` (pure).

A robots.txt often names the sections that matter to a site (`Allow: /careers`,
`Disallow: /investors`). Every path its `allow`/`disallow` lines name is classified like any
other URL of the site; the ones that are a surface and that this crawler may fetch become
candidates. A path robots.txt disallows for us is never one: discovery does not even
propose what it could never watch.

Rules are patterns, not URLs: `*` and a trailing `$` are pattern syntax, so a path is read
up to its first `*` (`/careers/*` names `/careers/`), a trailing `$` is dropped, and a path
with a query, or nothing left but `/`, names no section.
"""

from __future__ import annotations

from catlas_assets.domain.candidates import Candidate
from catlas_assets.domain.classify import classify_url, path_depth
from catlas_assets.domain.robots import RobotsTxt
from catlas_assets.domain.vocabulary import DiscoveryMethod, Surface


def path_of_rule(raw: str) -> str | None:
    """The literal path a rule's value names, or None (a pattern that names no section)."""
    path = raw.strip().removesuffix("$").split("*", 1)[0]
    if not path.startswith("/") or "?" in path or path.strip("/") == "":
        return None
    return path


def robots_candidates(rules: RobotsTxt, site: str, *, domain: str, agent: str) -> list[Candidate]:
    """Candidates (method `robots`) for the surfaces robots.txt names and allows `agent`.

    `site` is the origin the robots.txt belongs to (`https://example.com`), `domain` the
    company's registrable domain.
    """
    out: list[Candidate] = []
    seen: set[str] = set()
    for raw in rules.named_paths():
        path = path_of_rule(raw)
        if path is None:
            continue
        url = site.rstrip("/") + path
        if url in seen:
            continue
        seen.add(url)
        found = classify_url(url, company_domain=domain)
        if found is None or found.surface is Surface.HOMEPAGE:
            continue
        if not rules.allowed(url, agent):
            continue
        out.append(
            Candidate(
                url=url,
                surface=found.surface,
                method=DiscoveryMethod.ROBOTS,
                confidence=found.confidence,
                verified=False,
                depth=path_depth(url),
            )
        )
    return out
