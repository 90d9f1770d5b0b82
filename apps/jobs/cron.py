"""Five-field cron expressions (minute hour day-of-month month day-of-week), in UTC.

Fields take `*`, numbers, ranges `a-b`, steps `*/n` or `a-b/n`, and lists `a,b`. As in cron,
when both day fields are restricted a day matches either of them. Day-of-week 0 and 7 are
Sunday.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day", 1, 31), ("month", 1, 12), ("dow", 0, 7))
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
    minute: frozenset[int]
    hour: frozenset[int]
    day: frozenset[int]
    month: frozenset[int]
    dow: frozenset[int]
    day_any: bool
    dow_any: bool

    def _day_matches(self, moment: datetime) -> bool:
        dom = moment.day in self.day
        dow = (moment.isoweekday() % 7) in self.dow
        if self.day_any or self.dow_any:
            return dom and dow
        return dom or dow

    def next_after(self, moment: datetime) -> datetime:
        """The first matching minute strictly after `moment`."""
        t = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            if t.month not in self.month or not self._day_matches(t):
                t = (t + timedelta(days=1)).replace(hour=0, minute=0)
            elif t.hour not in self.hour:
                t = (t + timedelta(hours=1)).replace(minute=0)
            elif t.minute not in self.minute:
                t += timedelta(minutes=1)
            else:
                return t
        raise CronError("the expression never matches")


def _field(text: str, low: int, high: int, name: str) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if body == "*":
                start, end = low, high
            elif "-" in body:
                a, b = body.split("-", 1)
                start, end = int(a), int(b)
            else:
                start = end = int(body)
                if step_text:
                    end = high
        except ValueError:
            raise CronError(f"{name}: {part!r} is not a number, range or step") from None
        if step < 1 or start < low or end > high or start > end:
            raise CronError(f"{name}: {part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def parse(expression: str) -> Cron:
    text = _ALIASES.get(expression.strip().lower(), expression.strip())
    fields = text.split()
    if len(fields) != 5:
        raise CronError("a cron expression has five fields: minute hour day month weekday")
    parsed = [
        _field(value, low, high, name)
        for value, (name, low, high) in zip(fields, _FIELDS, strict=True)
    ]
    dow = frozenset(d % 7 for d in parsed[4])
    return Cron(
        minute=parsed[0],
        hour=parsed[1],
        day=parsed[2],
        month=parsed[3],
        dow=dow,
        day_any=fields[2] == "*",
        dow_any=fields[4] == "*",
    )
