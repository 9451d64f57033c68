"""Deadlines and late policies: parse them, and compute a submission's lateness and penalty (pure functions)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone

from autograder.spec.manifest import table as manifest_table

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hour|hours|d|day|days)\s*$", re.IGNORECASE)
_PENALTY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*(?:/|per\s+)\s*(day|d|hour|h)\s*$", re.IGNORECASE)
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_UNIT_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600,
                 "d": 86400, "day": 86400, "days": 86400}

NO_TIME = "no time recorded"


@dataclass(frozen=True)
class LatePolicy:
    """How late work loses points.

    Attributes:
        rate: Fraction of the raw score lost per started period after the deadline (0.1 for ``10%/day``).
        period_seconds: The period: 86400 (per day) or 3600 (per hour).
        grace_seconds: Lateness up to this much is forgiven entirely.
        cap: The largest fraction a late submission can lose (1.0: no cap).
        last_accepted: Work submitted after this time earns nothing, or None.
    """

    rate: float = 0.0
    period_seconds: int = 86400
    grace_seconds: float = 0.0
    cap: float = 1.0
    last_accepted: datetime | None = None

    def describe(self) -> str:
        """The policy in one line, e.g. ``10%/day after a 15 min grace, at most 50%``."""
        if not self.rate and self.last_accepted is None:
            return "no late penalty"
        unit = "day" if self.period_seconds == 86400 else "hour"
        parts = [f"{self.rate * 100:g}%/{unit}"]
        if self.grace_seconds:
            parts.append(f"after a {format_duration(self.grace_seconds)} grace")
        if self.cap < 1.0:
            parts.append(f"at most {self.cap * 100:g}%")
        if self.last_accepted is not None:
            parts.append(f"nothing accepted after {self.last_accepted.isoformat()}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Lateness:
    """How late one submission was, and what that costs.

    Attributes:
        submitted_at: When it was submitted, or None when no time was recorded.
        due: The deadline that applied to this student (with any extension), or None.
        late_seconds: Seconds after the deadline (0 when on time or when no time was recorded).
        penalty: Fraction of the raw score lost (0 to 1).
        note: What a report shows, e.g. ``on time``, ``2 days late: -20%``, ``no time recorded``.
    """

    submitted_at: datetime | None
    due: datetime | None
    late_seconds: float
    penalty: float
    note: str

    def final(self, raw: float) -> float:
        """The score after the penalty (a fraction of the raw score; never negative)."""
        return round(max(0.0, raw * (1.0 - self.penalty)), 6)


def parse_when(value: object, what: str) -> datetime:
    """A timezone-aware time from an ISO 8601 string or a TOML datetime.

    Args:
        value: ``"2026-12-01T23:59:00+01:00"`` (``Z`` allowed), or a ``datetime`` with a UTC offset.
        what: What the value is, for the error message (e.g. ``"[assignment] due"``).

    Raises:
        ValueError: If it is not a time, or has no UTC offset (a deadline must not depend on the grading machine).
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        raise ValueError(f"{what} is a date ({value}); give a time with its UTC offset, "
                         f"e.g. {value}T23:59:00+01:00")
    else:
        text = str(value).strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            raise ValueError(f"{what} {text!r} is not an ISO 8601 time; expected e.g. 2026-12-01T23:59:00+01:00") \
                from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{what} {moment.isoformat()} has no UTC offset; add one, e.g. "
                         f"{moment.isoformat()}+01:00 (or Z for UTC)")
    return moment


def parse_duration(text: object, what: str) -> float:
    """Seconds from ``"15m"``, ``"2h"``, ``"1 day"`` or a number of seconds.

    Raises:
        ValueError: If the text is not a duration.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text >= 0:
        return float(text)
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"{what} {text!r} is not a duration; expected e.g. \"15m\", \"2h\" or \"1d\"")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]


def parse_percent(text: object, what: str) -> float:
    """A fraction from ``"50%"``.

    Raises:
        ValueError: If it is not a percentage between 0 and 100.
    """
    match = _PERCENT.match(str(text))
    if not match or float(match.group(1)) > 100:
        raise ValueError(f"{what} {text!r} is not a percentage between 0% and 100% (e.g. \"50%\")")
    return float(match.group(1)) / 100


def parse_penalty(text: object, what: str = "late penalty") -> tuple[float, int]:
    """``(rate, period_seconds)`` from ``"10%/day"``, ``"2%/hour"``, ``"5% per day"``, ``"1%/h"``.

    Raises:
        ValueError: If the text is not a penalty per day or hour.
    """
    match = _PENALTY.match(str(text))
    if not match or float(match.group(1)) > 100:
        raise ValueError(f"{what} {text!r} is not a penalty per day or hour; expected e.g. \"10%/day\" or "
                         f"\"2%/hour\"")
    return float(match.group(1)) / 100, 86400 if match.group(2).lower().startswith("d") else 3600


def policy_from_table(table: dict[str, object]) -> LatePolicy:
    """A LatePolicy from the manifest's ``[late]`` table (``penalty``, ``grace``, ``cap``, ``last_accepted``).

    Raises:
        ValueError: If a key is unknown or a value cannot be read.
    """
    known = [key.name for key in manifest_table("late").keys]  # the manifest's schema declares them
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ValueError(f"[late] has unknown keys {unknown}; known: {', '.join(known)}")
    rate, period = parse_penalty(table["penalty"], "[late] penalty") if "penalty" in table else (0.0, 86400)
    return LatePolicy(
        rate=rate, period_seconds=period,
        grace_seconds=parse_duration(table["grace"], "[late] grace") if "grace" in table else 0.0,
        cap=parse_percent(table["cap"], "[late] cap") if "cap" in table else 1.0,
        last_accepted=parse_when(table["last_accepted"], "[late] last_accepted") if "last_accepted" in table
        else None)


def format_duration(seconds: float) -> str:
    """A short human duration: ``45 s``, ``15 min``, ``3 h 5 min``, ``2 d 1 h``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60 % 60, seconds // 3600 % 24, seconds // 86400
    if days:
        return f"{days} d" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{minutes} min"


def lateness(submitted_at: datetime | None, due: datetime | None, policy: LatePolicy) -> Lateness:
    """How late a submission was and the fraction of its raw score it loses.

    Lateness counts from the deadline; work late by no more than the grace period loses nothing; otherwise every
    started period (day or hour) costs ``rate``, at most ``cap``. Work after ``last_accepted`` loses everything.
    Without a submission time or a deadline nothing is lost.

    Args:
        submitted_at: When the work was submitted (timezone-aware), or None.
        due: The deadline for this student (timezone-aware, extension included), or None.
        policy: The late policy.

    Returns:
        The lateness.
    """
    if submitted_at is None:
        return Lateness(None, due, 0.0, 0.0, NO_TIME)
    if due is None:
        return Lateness(submitted_at, None, 0.0, 0.0, "no deadline")
    late = (submitted_at - due).total_seconds()
    if policy.last_accepted is not None and submitted_at > policy.last_accepted:
        return Lateness(submitted_at, due, max(late, 0.0), 1.0,
                        f"{format_duration(max(late, 0.0))} late, after the last accepted time: -100%")
    if late <= 0:
        return Lateness(submitted_at, due, 0.0, 0.0, "on time")
    if late <= policy.grace_seconds:
        return Lateness(submitted_at, due, late, 0.0, f"{format_duration(late)} late, within the grace period")
    periods = math.ceil(late / policy.period_seconds)
    penalty = min(policy.cap, policy.rate * periods, 1.0)
    unit = "day" if policy.period_seconds == 86400 else "hour"
    counted = f"{periods} {unit}{'s' if periods != 1 else ''}"
    capped = " (capped)" if policy.rate * periods > policy.cap else ""
    return Lateness(submitted_at, due, late, round(penalty, 6),
                    f"{format_duration(late)} late ({counted} counted): -{penalty * 100:g}%{capped}")


def as_utc_text(moment: datetime | None) -> str | None:
    """An aware time as ISO 8601 in UTC (what the gradebook stores), or None."""
    return None if moment is None else moment.astimezone(timezone.utc).isoformat()
