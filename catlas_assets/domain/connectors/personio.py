"""Personio XML feed: `{company}.jobs.personio.de/xml`, `<workzag-jobs><position>...`.

An empty board is a valid `<workzag-jobs></workzag-jobs>`; any other root is SCHEMA.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element, ParseError

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from catlas_assets.domain.connectors.base import Connector, Page, ats_extraction, require
from catlas_assets.domain.connectors.board_links import TOKEN, BoardLinks, patterns, xml_root
from catlas_assets.domain.extract.extraction import Extraction, SchemaError, job

ROOT = "workzag-jobs"


def _child(node: Element, name: str) -> str | None:
    found = node.find(name)
    if found is None or found.text is None:
        return None
    return found.text.strip() or None


class Personio(Connector):
    name = "personio"
    kind = "ats"
    description = "Personio XML job feed (/xml)"
    board_links = BoardLinks(
        patterns(rf"^(?P<token>{TOKEN})\.jobs\.personio\.(?P<tld>de|com)(?:/|$)"),
        lambda s, g: f"{s}://{g['token']}.jobs.personio.{g['tld']}/xml",
        lambda body: xml_root(body) == ROOT,
    )

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = ats_extraction(self.name, surface)
        for page in pages:
            try:
                root = SafeET.fromstring(page.body)
            except (ParseError, DefusedXmlException) as exc:
                raise SchemaError(
                    f"{self.name}: the answer from {page.url} is not XML ({exc})"
                ) from None
            require(root.tag == ROOT, self.name, f"root <{ROOT}>, got <{root.tag}>")
            parts = urlsplit(page.url)
            for position in root.findall("position"):
                ident = _child(position, "id")
                title = _child(position, "name")
                require(bool(ident and title), self.name, "position id/name")
                offices = [_child(position, "office")]
                extra = position.find("additionalOffices")
                if extra is not None:
                    offices += [(o.text or "").strip() for o in extra.findall("office")]
                schedule = _child(position, "schedule")
                employment = _child(position, "employmentType")
                out.add(
                    "job",
                    job(
                        vendor=self.name,
                        vendor_id=ident,
                        title=title or "",
                        department=_child(position, "department"),
                        team=_child(position, "recruitingCategory"),
                        locations=[o for o in offices if o],
                        employment_type=" ".join(p for p in (employment, schedule) if p) or None,
                        url=f"{parts.scheme}://{parts.netloc}/job/{ident}",
                        posted_at=_child(position, "createdAt"),
                    ),
                )
        return out
