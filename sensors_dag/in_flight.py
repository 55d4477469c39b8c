"""How many runs of a job are in flight: the one count both request sensors wait on."""

from __future__ import annotations

import dagster as dg

# Every status in which a run already asked for will still do its work, or is doing it:
# NOT_STARTED (created, not yet queued or launched: a sensor's request in the moment
# before the daemon submits it), QUEUED, STARTING, STARTED, and CANCELING (still running
# until the cancel lands, its claims held). Counting NOT_STARTED and CANCELING keeps a
# second run from being requested while the first has not begun, or has not yet stopped.
IN_FLIGHT_STATUSES = [
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


def runs_in_flight(instance: dg.DagsterInstance, job_name: str) -> int:
    return instance.get_runs_count(dg.RunsFilter(job_name=job_name, statuses=IN_FLIGHT_STATUSES))
