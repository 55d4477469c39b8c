"""One spelling everywhere: the value lists of DESIGN.md's Vocabulary.

Tables use these tuples for CHECK constraints, the CLI for choices and the lake as values.
"""

from __future__ import annotations

from enum import StrEnum


class Surface(StrEnum):
    HOMEPAGE = "homepage"
    CAREERS = "careers"
    JOBS_BOARD = "jobs_board"
    PRICING = "pricing"
    BLOG = "blog"
    NEWSROOM = "newsroom"
    FEED = "feed"
    DOCS = "docs"
    DEVELOPER = "developer"
    STATUS = "status"
    INVESTORS = "investors"
    PEOPLE = "people"
    PRODUCTS = "products"
    LOCATIONS = "locations"


class SensorStatus(StrEnum):
    PENDING = "pending"
    ACTIVE = "active"
    FAILING = "failing"
    STALE = "stale"
    RETIRED = "retired"
    BLOCKED = "blocked"
    REDIRECTED = "redirected"


# The scheduler claims these only; the others belong to repair or wait for robots.txt.
CLAIMABLE_STATUSES = (SensorStatus.ACTIVE, SensorStatus.FAILING, SensorStatus.PENDING)


class OnboardingStatus(StrEnum):
    PENDING = "pending"
    DISCOVERING = "discovering"
    ACTIVE = "active"
    FAILED = "failed"
    NO_WEBSITE = "no_website"


class QueueJobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    DEAD = "dead"


class ReviewKind(StrEnum):
    BLOCKED_SOURCE = "blocked_source"
    SENSOR_MIGRATION = "sensor_migration"
    SENSOR_STALE = "sensor_stale"
    SENSOR_RETIRED = "sensor_retired"
    RUN_FAILED = "run_failed"  # a Dagster run failed: a person looks at its logs


class ReviewStatus(StrEnum):
    OPEN = "open"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    CLOSED = "closed"


class Outcome(StrEnum):
    """Per sensor run (spec: Pipeline states)."""

    NOT_MODIFIED = "not_modified"
    UNCHANGED = "unchanged"
    OK = "ok"
    CHANGED = "changed"
    FAILED = "failed"
    REDIRECTED = "redirected"
    SKIPPED = "skipped"


# The outcomes that are a successful observation: they count as `succeeded` in a verdict.
SUCCESSES = (Outcome.OK, Outcome.CHANGED, Outcome.UNCHANGED, Outcome.NOT_MODIFIED)

# The outcomes that stored a new item or a change: only these make a run productive
# (spec 001); an unchanged page or a 304 succeeded, yet yielded nothing new.
PRODUCTIVE = (Outcome.OK, Outcome.CHANGED)


class ChangeKind(StrEnum):
    NOISE = "noise"
    MINOR = "minor"
    MEANINGFUL = "meaningful"
    MAJOR = "major"
    CRITICAL = "critical"


MEANINGFUL_OR_ABOVE = (ChangeKind.MEANINGFUL, ChangeKind.MAJOR, ChangeKind.CRITICAL)


class ChangeStatus(StrEnum):
    PENDING = "pending"
    ARCHIVED = "archived"
    DELIVERED = "delivered"


class FailureClass(StrEnum):
    DNS = "DNS"
    TIMEOUT = "TIMEOUT"
    HTTP_4XX = "HTTP_4XX"
    HTTP_5XX = "HTTP_5XX"
    BOT_CHALLENGE = "BOT_CHALLENGE"
    PARSING = "PARSING"
    SCHEMA = "SCHEMA"
    REDIRECT = "REDIRECT"
    PAGE_REMOVED = "PAGE_REMOVED"
    RATE_LIMIT = "RATE_LIMIT"
    ROBOTS = "ROBOTS"
    BLOCKED_DESTINATION = "BLOCKED_DESTINATION"
    TOO_LARGE = "TOO_LARGE"
    UNKNOWN = "UNKNOWN"


class DiscoveryMethod(StrEnum):
    NAV = "nav"
    LINK = "link"
    SITEMAP = "sitemap"
    ROBOTS = "robots"
    PROBE = "probe"
    SUBDOMAIN = "subdomain"
    ATS = "ats"
    FEED = "feed"
    REPAIR = "repair"
    MANUAL = "manual"  # hand-declared with `catlas sensors add`


class DomainKind(StrEnum):
    CANONICAL = "canonical"
    ALIAS = "alias"
    REDIRECT = "redirect"


class RunKind(StrEnum):
    TICK = "tick"
    DAEMON = "daemon"
    DISCOVERY = "discovery"
    REPAIR = "repair"
    SITE_CRAWL = "site_crawl"
    REPROCESS = "reprocess"
    SENSOR = "sensor"  # one `catlas run-sensor`


class Stop(StrEnum):
    """Why a run ended (spec 001)."""

    QUEUE_EMPTY = "queue_empty"
    MAX_REQUESTS = "max_requests"
    CONSECUTIVE_FAILURES = "consecutive_failures"
    ERROR_RATE = "error_rate"
    BLOCKED = "blocked"
    INTERRUPTED = "interrupted"
    ERROR = "error"


class RunOutcome(StrEnum):
    """How a run went (spec 001)."""

    SUCCESS = "success"
    PARTIAL = "partial"
    FAILED = "failed"


class EntityType(StrEnum):
    JOB = "job"
    PERSON = "person"
    PRODUCT = "product"
    PRICING_PLAN = "pricing_plan"
    NEWS = "news"
    LOCATION = "location"
    INCIDENT = "incident"


class EntityEvent(StrEnum):
    ADDED = "added"
    SEEN = "seen"
    UPDATED = "updated"
    NO_LONGER_LISTED = "no_longer_listed"
    SUPERSEDED = "superseded"
    REMOVED = "removed"


class CrawlStatus(StrEnum):
    """A `webpages` row's place in the site-crawl queue (spec 003; spelled as the spec)."""

    PENDING = "PENDING"
    CRAWLING = "CRAWLING"
    CRAWLED = "CRAWLED"
    CRAWL_FAILED = "CRAWL_FAILED"
    SKIPPED = "SKIPPED"


class ProcessingStatus(StrEnum):
    """Where a page's stored file is in processing (raw bytes -> snapshot)."""

    UPLOADED = "uploaded"  # raw bytes stored, not processed yet
    PROCESSING = "processing"  # handed to processing
    EXTRACTED = "extracted"
    FAILED = "failed"


class CrawlMode(StrEnum):
    """The eight site-crawl modes (spec 003); the mode registry is keyed by this."""

    RESUME = "resume"
    CHANGED_NEW = "changed_new"
    FULL = "full"
    RETRY_FAILED = "retry_failed"
    SINGLE_PAGE = "single_page"
    PATH_SCOPE = "path_scope"
    REPROCESS_FAILED = "reprocess_failed"
    REINDEX_EXISTING = "reindex_existing"


class RunStatus(StrEnum):
    """A launched run's lifecycle (site crawls): COMPLETED and FAILED are final."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


class RunLauncher(StrEnum):
    LOCAL = "local"  # a subprocess, or this process
    DAGSTER = "dagster"  # the Dagster run id is the launch handle


class PageEvent(StrEnum):
    """One site-crawl event per processed URL (`run_events.event`)."""

    NEW = "new"
    UNCHANGED = "unchanged"
    CHANGED = "changed"
    FAILED = "failed"
    SKIPPED = "skipped"
    REDIRECTED = "redirected"


class Transition(StrEnum):
    """How a page event compares with the URL's last success-or-failure outcome."""

    REGRESSION = "regression"  # failed after succeeding
    RECOVERY = "recovery"  # succeeded after failing


def values(enum: type[StrEnum]) -> tuple[str, ...]:
    return tuple(member.value for member in enum)
