"""Five-field cron expressions (minute hour day-of-month month day-of-week), in UTC.

Parsing and matching are cronsim's (healthchecks' maintained parser): ranges, steps, lists,
month and weekday names, `L` and `#`, and cron's rule that a day matches either day field
when both are restricted. This module adds the `@nightly` alias schedules use, and turns
cronsim's errors into the one error the jobs service reports against the `cron` field.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from cronsim import CronSim, CronSimError

# cronsim knows @hourly, @daily and friends only as Vixie cron's full-line macros; these are
# the spellings schedules accept, `@nightly` (02:00 UTC) being ours.
_ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@nightly": "0 2 * * *",
    "@weekly": "0 0 * * 0",
}


class CronError(ValueError):
    pass


@dataclass(frozen=True)
class Cron:
    expression: str

    def next_after(self, moment: datetime) -> datetime:
        """The first matching minute strictly after `moment`."""
        aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        try:
            return next(CronSim(self.expression, aware.astimezone(UTC)))
        except StopIteration:
            raise CronError("the expression never matches") from None


def parse(expression: str) -> Cron:
    text = _ALIASES.get(expression.strip().lower(), expression.strip())
    if len(text.split()) != 5:
        raise CronError("a cron expression has five fields: minute hour day month weekday")
    try:
        CronSim(text, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise CronError(str(exc)) from None
    return Cron(text)
