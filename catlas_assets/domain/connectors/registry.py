"""The connector registry: name -> connector, as `catlas connectors` lists them."""

from __future__ import annotations

from catlas_assets.domain.connectors.ashby import Ashby
from catlas_assets.domain.connectors.base import Connector
from catlas_assets.domain.connectors.feed import Feed
from catlas_assets.domain.connectors.generic_html import GenericHtml
from catlas_assets.domain.connectors.greenhouse import Greenhouse
from catlas_assets.domain.connectors.lever import Lever
from catlas_assets.domain.connectors.personio import Personio
from catlas_assets.domain.connectors.recruitee import Recruitee
from catlas_assets.domain.connectors.sitemap import Sitemap
from catlas_assets.domain.connectors.smartrecruiters import SmartRecruiters
from catlas_assets.domain.connectors.statuspage import Statuspage
from catlas_assets.domain.connectors.teamtailor import Teamtailor
from catlas_assets.domain.connectors.workable import Workable
from catlas_assets.domain.connectors.workday import Workday
from catlas_assets.errors import CatlasError

CONNECTORS: dict[str, Connector] = {
    c.name: c
    for c in (
        GenericHtml(),
        Feed(),
        Sitemap(),
        Statuspage(),
        Greenhouse(),
        Lever(),
        Ashby(),
        Workable(),
        Workday(),
        Recruitee(),
        Personio(),
        Teamtailor(),
        SmartRecruiters(),
    )
}


def get(name: str) -> Connector:
    try:
        return CONNECTORS[name]
    except KeyError:
        raise CatlasError(
            f"unknown connector {name!r}; known: {', '.join(sorted(CONNECTORS))}"
        ) from None
