"""`catlas repair`: find failing, stale and redirected sensors' pages again."""

from __future__ import annotations

import click

from catlas_assets.cli.app import Context, cli, console, finish, pass_context, table
from catlas_assets.option_types import ROW_ID
from catlas_assets.run_options import control_from, run_options


@cli.command("repair")
@click.option("--dry-run", is_flag=True, help="Ask the same questions, write nothing.")
@click.option("--sensor", "sensor_id", type=ROW_ID, help="Only this sensor (cool-down ignored).")
@run_options
@pass_context
def repair_cmd(
    obj: Context,
    dry_run: bool,
    sensor_id: int | None,
    max_requests: int | None,
    deadline: float | None,
    fail_when: str,
) -> None:
    """Retry each due sensor, score candidates for its surface, and decide (spec: Repair)."""
    from catlas_assets.services.repair import repair_pass

    obj.runtime.check_ready()
    control = control_from(max_requests, deadline)
    result = repair_pass(obj.runtime, dry_run=dry_run, sensor_id=sensor_id, control=control)
    for attempt in result.attempts:
        console.print(
            f"sensor {attempt.sensor_id} {attempt.surface} {attempt.url} ({attempt.status}): "
            f"[bold]{attempt.decision.action.value}[/]"
            + (f" -> {attempt.decision.successor}" if attempt.decision.successor else "")
            + (f" (sensor {attempt.successor_id})" if attempt.successor_id else "")
            + f" - {attempt.decision.reason}; {attempt.requests} request(s)"
        )
        if attempt.candidates:
            table(
                ["candidate", "source", "simhash distance", "ratio", "passes"],
                [
                    (c.url, c.source, c.distance, c.ratio, "yes" if c.passes else "no")
                    for c in attempt.candidates
                ],
            )
    if not result.attempts:
        console.print("no sensor is due for repair")
    if result.report is None:
        console.print("dry run: nothing was written")
        return
    finish(result.report, fail_when=fail_when)
