"""Atlassian Statuspage `/api/v2/summary.json`: indicator, components and open incidents."""

from __future__ import annotations

from datetime import datetime

from catlas_assets.domain.connectors.base import Connector, Page, load_json, require
from catlas_assets.domain.connectors.board_links import json_of
from catlas_assets.domain.extract.extraction import Extraction

INDICATORS = ("none", "minor", "major", "critical")
# Where a Statuspage answers its summary, under the page's own host.
SUMMARY_PATH = "/api/v2/summary.json"


def is_summary(data: object) -> bool:
    """The shape of a `summary.json`: a page object, a status object, a component list."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("page"), dict)
        and isinstance(data.get("status"), dict)
        and isinstance(data.get("components"), list)
    )


def is_summary_body(body: bytes) -> bool:
    return is_summary(json_of(body))


class Statuspage(Connector):
    name = "statuspage"
    kind = "status"
    description = "Atlassian Statuspage summary.json"

    def parse(self, pages: list[Page], surface: str, now: datetime) -> Extraction:
        out = Extraction(connector=self.name, surface=surface, confidence=1.0, structured=True)
        data = load_json(pages[0], self.name)
        require(is_summary(data), self.name, "page, components and status")
        indicator = data["status"].get("indicator")
        require(indicator in INDICATORS, self.name, f"status.indicator in {INDICATORS}")
        components = []
        for comp in data["components"]:
            require(
                isinstance(comp, dict) and "name" in comp and "status" in comp,
                self.name,
                "component name/status",
            )
            if comp.get("group"):
                continue  # a group's state is its children's
            components.append(
                {"id": comp.get("id"), "name": comp["name"], "status": comp["status"]}
            )
        components.sort(key=lambda c: (c["name"], c["id"] or ""))
        out.status = {
            "indicator": indicator,
            "description": data["status"].get("description"),
            "components": components,
        }
        for incident in data.get("incidents") or []:
            require(isinstance(incident, dict) and "id" in incident, self.name, "incident id")
            out.add(
                "incident",
                {
                    "key": f"statuspage:{incident['id']}",
                    "name": incident.get("name"),
                    "status": incident.get("status"),
                    "impact": incident.get("impact"),
                    "started_at": incident.get("started_at") or incident.get("created_at"),
                    "url": incident.get("shortlink"),
                },
            )
        return out
