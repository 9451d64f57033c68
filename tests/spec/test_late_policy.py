"""Deadlines and late policies: parsing, and the lateness and penalty of a submission (pure computation)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.errors import AssignmentError
from autograder.spec.assignment import load_assignment
from autograder.spec.late import (
    NO_TIME,
    LatePolicy,
    lateness,
    parse_duration,
    parse_penalty,
    parse_percent,
    parse_when,
    policy_from_table,
)

CET = timezone(timedelta(hours=1))
DUE = datetime(2026, 12, 1, 23, 59, tzinfo=CET)
TEN_A_DAY = LatePolicy(rate=0.10, period_seconds=86400)


def test_two_days_late_at_ten_percent_a_day_is_eighty_of_a_hundred() -> None:
    late = lateness(DUE + timedelta(days=1, hours=20), DUE, TEN_A_DAY)
    assert late.penalty == pytest.approx(0.2) and late.final(100.0) == 80.0
    assert "2 days counted" in late.note and "-20%" in late.note


def test_exactly_at_the_deadline_is_on_time_and_one_second_after_is_a_started_day() -> None:
    assert lateness(DUE, DUE, TEN_A_DAY).note == "on time"
    assert lateness(DUE, DUE, TEN_A_DAY).final(7.5) == 7.5
    assert lateness(DUE + timedelta(seconds=1), DUE, TEN_A_DAY).penalty == pytest.approx(0.1)


def test_within_grace_costs_nothing_and_after_grace_counts_from_the_deadline() -> None:
    policy = policy_from_table({"penalty": "10%/day", "grace": "15m"})
    inside = lateness(DUE + timedelta(minutes=15), DUE, policy)
    assert inside.penalty == 0.0 and "within the grace period" in inside.note
    assert lateness(DUE + timedelta(minutes=16), DUE, policy).penalty == pytest.approx(0.1)


def test_cap_and_last_accepted() -> None:
    capped = policy_from_table({"penalty": "10%/day", "cap": "50%"})
    late = lateness(DUE + timedelta(days=9), DUE, capped)
    assert late.penalty == pytest.approx(0.5) and "(capped)" in late.note and late.final(90) == 45.0
    closing = LatePolicy(rate=0.1, last_accepted=DUE + timedelta(days=3))
    assert lateness(DUE + timedelta(days=3), DUE, closing).penalty == pytest.approx(0.3)
    refused = lateness(DUE + timedelta(days=3, seconds=1), DUE, closing)
    assert refused.penalty == 1.0 and refused.final(100) == 0.0 and "last accepted" in refused.note


def test_per_hour_penalty() -> None:
    rate, period = parse_penalty("2%/hour")
    late = lateness(DUE + timedelta(hours=2, minutes=1), DUE, LatePolicy(rate=rate, period_seconds=period))
    assert late.penalty == pytest.approx(0.06) and "3 hours counted" in late.note


def test_an_extension_is_just_a_later_deadline() -> None:
    extended = DUE + timedelta(days=2)
    assert lateness(DUE + timedelta(days=1), extended, TEN_A_DAY).note == "on time"


def test_timezones_compare_instants_not_wall_clocks() -> None:
    in_utc = datetime(2026, 12, 1, 22, 59, tzinfo=timezone.utc)  # = DUE, written in UTC
    assert lateness(in_utc, DUE, TEN_A_DAY).note == "on time"
    assert lateness(in_utc + timedelta(seconds=1), DUE, TEN_A_DAY).penalty == pytest.approx(0.1)
    assert parse_when("2026-12-01T22:59:00Z", "due") == DUE


def test_no_time_recorded_means_no_penalty() -> None:
    late = lateness(None, DUE, TEN_A_DAY)
    assert late.penalty == 0.0 and late.note == NO_TIME and late.final(3.0) == 3.0


@pytest.mark.parametrize("text, message", [
    ("2026-12-01T23:59:00", "has no UTC offset"),
    ("next friday", "is not an ISO 8601 time"),
])
def test_bad_times_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_when(text, "--due")


def test_bad_policies_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="not a penalty per day or hour"):
        parse_penalty("10%/week")
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon", "[late] grace")
    with pytest.raises(ValueError, match="between 0% and 100%"):
        parse_percent("150%", "[late] cap")
    with pytest.raises(ValueError, match="unknown keys"):
        policy_from_table({"penalty": "10%/day", "grace_period": "1h"})


def _manifest(tmp_path: Path, extra: str) -> Path:
    source = Path(__file__).resolve().parents[1] / "fixtures" / "assignments" / "mini" / "assignment.toml"
    folder = tmp_path / "assignments" / "mini"
    folder.mkdir(parents=True)
    text = source.read_text().replace("[assignment]\n", "[assignment]\n" + extra.split("@@")[0], 1)
    (folder / "assignment.toml").write_text(text + (extra.split("@@")[1] if "@@" in extra else ""))
    return tmp_path / "assignments"


def test_manifest_due_and_late_table(tmp_path: Path) -> None:
    root = _manifest(tmp_path, 'due = "2026-12-01T23:59:00+01:00"\n@@\n[late]\npenalty = "10%/day"\n'
                               'grace = "15m"\ncap = "50%"\n')
    spec = load_assignment("mini", root=root)
    assert spec.due == DUE
    assert spec.late == LatePolicy(rate=0.1, period_seconds=86400, grace_seconds=900.0, cap=0.5)


def test_manifest_toml_datetime_and_errors(tmp_path: Path) -> None:
    assert load_assignment("mini", root=_manifest(tmp_path / "a", "due = 2026-12-01T23:59:00+01:00\n")).due == DUE
    with pytest.raises(AssignmentError, match="has no UTC offset"):
        load_assignment("mini", root=_manifest(tmp_path / "b", 'due = "2026-12-01T23:59:00"\n'))
    with pytest.raises(AssignmentError, match="penalty is set but"):
        load_assignment("mini", root=_manifest(tmp_path / "c", '@@\n[late]\npenalty = "10%/day"\n'))
