"""The one error type users see: a message that names what was wrong, never a traceback."""

from catlas_assets.domain.masking import masked


class CatlasError(Exception):
    """A problem with input or environment that the user can fix; printed as one line.

    Its message is masked once, here: it reaches the terminal, logs and Dagster alike.
    """

    def __init__(self, message: object = "") -> None:
        super().__init__(masked(str(message)))


class ConfigError(CatlasError):
    """A setting (environment variable or file) is malformed."""


class NotFoundError(CatlasError):
    """A referenced row (sensor, company, run) does not exist."""


class StorageError(CatlasError):
    """The state store or the lake cannot be reached or written."""


class CrawlScopeError(CatlasError):
    """A site-crawl URL or path lies outside the scope of its config (or is empty)."""
