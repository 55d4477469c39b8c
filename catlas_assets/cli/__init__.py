"""The `catlas` command line: thin fronts over the services (no business rules here).

`app` holds the group, its context and the output helpers; each other module adds the
commands of one area to the group when it is imported.
"""

from catlas_assets.cli import (  # noqa: F401 - imported to register their commands
    admin,
    archive,
    catalog,
    crawl,
    demo,
    discovery,
    facts,
    lake,
    repair,
    reprocess,
    review,
    robots,
    runs,
    sensor_import,
    ui,
)
from catlas_assets.cli.app import cli, main

__all__ = ["cli", "main"]
