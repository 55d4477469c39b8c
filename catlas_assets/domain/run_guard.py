"""When a run must stop early (spec 001), pure: request budget, stop rules, interruption.

A run asks `may_start(domain)` before each unit of work (a sensor fetch) and reports it
with `finished(...)`. The guard applies the stop rules to the whole run and, because one
tick spans many sites, also to each registrable domain: a domain that trips a rule is
stopped alone (its remaining work is released by the caller) while the others go on.
Nothing here reads a clock; the caller turns a deadline or a signal into `interrupt`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catlas_assets.domain.verdict import NEUTRAL_FAILURES, StopRules
from catlas_assets.domain.vocabulary import FailureClass, Outcome, Stop

# The site's answer about a page that extraction cannot use (spec 001: never counts).
UNUSABLE_FAILURES = frozenset({FailureClass.PARSING, FailureClass.SCHEMA})


@dataclass(frozen=True)
class RuleLimits:
    max_consecutive_failures: int
    max_error_rate: float
    min_requests_for_error_rate: int

    def new(self) -> StopRules:
        return StopRules(
            self.max_consecutive_failures, self.max_error_rate, self.min_requests_for_error_rate
        )


@dataclass
class RunGuard:
    limits: RuleLimits
    max_requests: int | None = None  # HTTP requests, robots.txt and redirect hops included
    requests: int = 0
    in_flight: int = 0
    stop: Stop | None = None
    detail: str = ""
    stopped_domains: dict[str, Stop] = field(default_factory=dict)
    _domain_rules: dict[str, StopRules] = field(default_factory=dict)
    _streak: list[str] = field(default_factory=list)  # domains of the current failure streak

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    def may_start(self, domain: str) -> bool:
        """Whether one more unit of work may start now (it then counts as in flight)."""
        if self.stop is not None or domain in self.stopped_domains:
            return False
        # Each unit in flight costs at least one request: never start past the budget.
        if self.max_requests is not None and self.requests + self.in_flight >= self.max_requests:
            if self.in_flight == 0:
                self._end(Stop.MAX_REQUESTS, f"Reached max requests limit ({self.max_requests})")
            return False
        self.in_flight += 1
        return True

    def finished(
        self,
        domain: str,
        *,
        outcome: Outcome,
        failure_class: FailureClass | None,
        requests: int,
    ) -> Stop | None:
        """Count one finished unit; return the stop it caused for its domain, if any.

        The domain's rules are applied first. A domain that trips them is stopped alone and
        its requests leave the run's tally, so one blocking site never stops the others;
        the run itself stops when the failures it still counts span several domains (a
        failure streak across sites, or an error rate over the whole run): our side is
        broken, or every site is refusing us.
        """
        self.in_flight = max(0, self.in_flight - 1)
        self.requests += requests
        if outcome is Outcome.SKIPPED or requests == 0 or domain in self.stopped_domains:
            return None  # no request went out, or its domain is already out of the run
        counted: FailureClass | None = None
        if outcome is Outcome.FAILED:
            counted = failure_class or FailureClass.UNKNOWN
        if counted in NEUTRAL_FAILURES or counted in UNUSABLE_FAILURES:
            return None  # the site's answer about one URL, or our own policy
        rules = self._domain_rules.setdefault(domain, self.limits.new())
        domain_stop = rules.record(counted)
        if domain_stop is not None:
            self.stopped_domains[domain] = domain_stop
            self._streak = [d for d in self._streak if d != domain]
            return domain_stop
        if counted is None:
            self._streak = []
            return None
        self._streak.append(domain)
        if self.stop is not None:
            return None
        counted_domains = [
            r for d, r in self._domain_rules.items() if d not in self.stopped_domains
        ]
        total = sum(r.requests for r in counted_domains)
        failures = sum(r.failures for r in counted_domains)
        if len(self._streak) >= self.limits.max_consecutive_failures:
            self._end(
                Stop.CONSECUTIVE_FAILURES,
                f"{len(self._streak)} requests in a row failed across "
                f"{len(set(self._streak))} domains",
            )
        elif (
            total >= self.limits.min_requests_for_error_rate
            and failures / total > self.limits.max_error_rate
        ):
            self._end(
                Stop.ERROR_RATE,
                f"{failures} of {total} requests failed (over {self.limits.max_error_rate:.0%})",
            )
        return None

    def settle(self, domains: set[str]) -> None:
        """At the end of a run over `domains`: when every one of them was stopped by a
        rule, the run was stopped by it too (a single blocking site stops its run)."""
        if self.stop is None and domains and domains <= set(self.stopped_domains):
            first = next(iter(self.stopped_domains.values()))
            self._end(first, self.domain_detail())

    def limit(self, detail: str) -> None:
        """A run's own limit other than the request budget (a crawl's page cap) ends it."""
        if self.stop is None:
            self._end(Stop.MAX_REQUESTS, detail)

    def interrupt(self, detail: str) -> None:
        if self.stop is None:
            self._end(Stop.INTERRUPTED, detail)

    def _end(self, stop: Stop, detail: str) -> None:
        self.stop, self.detail = stop, detail

    def domain_detail(self) -> str:
        """The domains stopped on their own, for the run's detail line."""
        if not self.stopped_domains:
            return ""
        parts = [f"{d} ({s.value})" for d, s in sorted(self.stopped_domains.items())]
        return "stopped early for " + ", ".join(parts)
