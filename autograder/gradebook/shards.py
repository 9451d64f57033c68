"""The class listing each shard records in its gradebook, and whether a set of gradebooks covers the whole class."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select

from autograder.gradebook.schema import current, meta
from autograder.gradebook.store import Gradebook, upsert

_PREFIX = "shard "  # meta keys "shard <assignment> <K>/<N>", one per shard a gradebook holds


@dataclass(frozen=True)
class ShardRecord:
    """One shard's view of its class, written by ``grade-all --shard`` at the start of every run.

    Attributes:
        assignment: The assignment graded.
        shard: K, the shard graded (1-based).
        count: N, the number of shards the class was split into.
        students: Every student of the class the shard was cut from (all N shards), sorted.
    """

    assignment: str
    shard: int
    count: int
    students: tuple[str, ...]


def record_shard(book: Gradebook, record: ShardRecord) -> None:
    """Store (or refresh) a shard's class listing in the gradebook's ``meta`` table."""
    value = json.dumps({"assignment": record.assignment, "shard": record.shard, "count": record.count,
                        "students": list(record.students)})
    with book.transaction() as connection:
        upsert(connection, meta, {"key": f"{_PREFIX}{record.assignment} {record.shard}/{record.count}"},
               {"value": value})


def read_shards(book: Gradebook) -> list[ShardRecord]:
    """Every shard record in a gradebook (none for one graded without ``--shard``)."""
    records = []
    with book.engine.connect() as connection:
        values = connection.execute(select(meta.c.value).where(meta.c.key.startswith(_PREFIX, autoescape=True))
                                    ).scalars().all()
    for value in values:
        data = json.loads(value)
        records.append(ShardRecord(data["assignment"], int(data["shard"]), int(data["count"]),
                                   tuple(data["students"])))
    return records


def graded_students(book: Gradebook) -> dict[str, set[str]]:
    """The students with a current submission (graded or not gradable), per assignment."""
    found: dict[str, set[str]] = {}
    with book.engine.connect() as connection:
        for assignment, student in connection.execute(select(current.c.assignment, current.c.student)):
            found.setdefault(assignment, set()).add(student)
    return found


def coverage_problems(records: Iterable[ShardRecord], graded: dict[str, set[str]]) -> list[str]:
    """Why a set of shard gradebooks does not hold the whole class, one sentence per assignment (empty: complete).

    Args:
        records: The shard records of every gradebook to be merged.
        graded: The students with a current submission in those gradebooks, per assignment.
    """
    by_assignment: dict[str, list[ShardRecord]] = {}
    for record in records:
        by_assignment.setdefault(record.assignment, []).append(record)
    problems = []
    for assignment, shards in sorted(by_assignment.items()):
        counts = sorted({r.count for r in shards})
        if len(counts) > 1:
            problems.append(f"{assignment}: the gradebooks come from different splits of the class (into "
                            f"{' and '.join(map(str, counts))} shards); re-grade every shard with one count")
            continue
        count = counts[0]
        missing_shards = sorted(set(range(1, count + 1)) - {r.shard for r in shards})
        sizes = sorted({len(r.students) for r in shards})
        klass = set().union(*(r.students for r in shards))
        missing = sorted(klass - graded.get(assignment, set()))
        if not missing_shards and not missing:
            continue
        parts = []
        if missing_shards:
            parts.append(f"no gradebook holds shard{'s' * (len(missing_shards) > 1)} "
                         f"{', '.join(map(str, missing_shards))} of {count}")
        if missing:
            shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
            parts.append(f"{len(missing)} of {len(klass)} students have no grade: {shown}")
        if len(sizes) > 1:
            parts.append(f"the shards saw different classes ({' and '.join(map(str, sizes))} students): re-run "
                         f"the shards graded before the submissions folder changed")
        problems.append(f"{assignment}: " + "; ".join(parts))
    return problems
