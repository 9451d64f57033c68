"""The zygote template: zygotes are forks of one process, hold nothing of it, and are replaced from it."""

from __future__ import annotations

import os
import signal
import time

import pytest

from autograder.sandbox.host import start_zygotes
from tests.sandbox.test_sandbox import marked, run, scratch, values, work  # noqa: F401 - scratch, work: fixtures

FD_CHECKS = '''
import os
from autograder.probe import check


@check("t", weight=1)
def descriptors(impl, ref, ctx):
    seen = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return {"sockets": sum(target.startswith("socket:") for target in seen)}
'''


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def _sockets(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found.append(target)
    return found


@pytest.fixture(scope="module")
def pair(scratch):
    zygotes = start_zygotes(2, scratch / "pair")
    yield zygotes
    for zygote in zygotes:
        zygote.close()


def test_two_zygotes_are_forks_of_one_template(pair, work, scratch):
    first, second = pair
    assert first.template is second.template
    for zygote in pair:
        assert zygote.isolation["tier"]
        assert _parent(zygote.process.pid) == first.template.process.pid  # forked, not a second interpreter
        assert values(run(zygote, work, "t.chatty", scratch)) == {"ok": True}
    assert first.uid != second.uid  # jobs of two zygotes never share a sandbox uid
    assert set(marked(first.marker)) >= {first.template.process.pid, first.process.pid, second.process.pid}


def test_no_zygote_and_no_job_holds_the_templates_socket(pair, work, scratch):
    zygote = pair[0]
    assert zygote.isolation["tier"]
    assert _sockets(zygote.template.process.pid)  # the template does hold it
    assert _sockets(zygote.process.pid) == []
    job = run(zygote, work, "t.descriptors", scratch, checks_source=FD_CHECKS)
    assert values(job) == {"sockets": 0}


def test_a_killed_zygote_is_forked_again_and_its_sibling_goes_on(pair, work, scratch):
    first, second = pair
    assert first.isolation["tier"] and second.isolation["tier"]
    template, old = first.template.process.pid, first.process.pid
    os.killpg(old, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while first.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not first.alive()
    assert values(run(first, work, "t.chatty", scratch)) == {"ok": True}  # restarted from the same template
    assert first.process.pid != old and first.template.process.pid == template
    assert values(run(second, work, "t.chatty", scratch)) == {"ok": True}


def test_closing_the_last_zygote_stops_the_template_and_everything_it_forked(scratch):
    zygotes = start_zygotes(2, scratch / "closing")
    for zygote in zygotes:
        assert zygote.isolation["tier"]
    marker, template = zygotes[0].marker, zygotes[0].template
    zygotes[0].close()
    assert template.alive() and zygotes[1].alive()  # the other zygote still uses it
    zygotes[1].close()
    assert not template.alive()
    deadline = time.monotonic() + 10
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked(marker) == []


def test_another_process_forks_its_zygotes_from_a_shared_template_and_outlives_it(scratch, work):
    """A batch's workers reach the parent's template through a socket each (here in one process for brevity)."""
    from autograder.sandbox.host import Zygote
    from autograder.sandbox.spawner import ZygoteTemplate

    owner = ZygoteTemplate(scratch / "owner")
    owner.start(None)
    attached = ZygoteTemplate.attached(owner.client(), owner.marker, scratch / "mine")
    worker = Zygote(scratch / "worker", template=attached)
    try:
        assert values(run(worker, work, "t.chatty", scratch)) == {"ok": True}
        assert _parent(worker.process.pid) == owner.process.pid and worker.marker == owner.marker
        owner.close()  # the batch ends early: its template and every zygote forked from it stop
        deadline = time.monotonic() + 10
        while worker.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not worker.alive()
        assert values(run(worker, work, "t.chatty", scratch)) == {"ok": True}  # now from a template of its own
        assert attached.process is not None and _parent(worker.process.pid) == attached.process.pid
    finally:
        worker.close()
        owner.close()
    assert not attached.alive()


def test_a_batchs_workers_share_the_pools_template(scratch, work):
    """Each worker of a batch gets its own way into one template, which the pool stops at its end."""
    from autograder.batch.pool import WorkerPool
    from autograder.sandbox.host import Zygote
    from autograder.sandbox.spawner import ZygoteTemplate
    from autograder.spec.assignment import load_assignment

    pool = WorkerPool(load_assignment("assignment2"), 2, 60.0, None)
    shared = [pool._shared_template() for _ in range(2)]
    zygotes = [Zygote(scratch / f"batch-{i}", template=ZygoteTemplate.attached(
        s.control, s.marker, scratch / f"batch-{i}" / "template")) for i, s in enumerate(shared)]
    try:
        for zygote in zygotes:
            assert values(run(zygote, work, "t.chatty", scratch)) == {"ok": True}
            assert _parent(zygote.process.pid) == pool.template.process.pid
        template = pool.template
        pool.close()
        assert pool.template is None and not template.alive()
    finally:
        for zygote in zygotes:
            zygote.close()
        pool.close()


def test_without_a_pidfd_the_zygote_is_watched_by_its_pid(scratch, work):
    """Linux < 5.3 has no pidfd: the template answers with the pid alone, and the grader polls and kills by it."""
    zygote = start_zygotes(1, scratch / "nopidfd")[0]
    try:
        assert zygote.isolation["tier"]
        process = zygote.process
        assert process.pid  # the template's answer, read when first needed
        os.close(process._pidfd)
        process._pidfd = None  # as the template answers where os.pidfd_open fails
        assert process.poll() is None and zygote.alive()
        assert values(run(zygote, work, "t.chatty", scratch)) == {"ok": True}
        process.kill()
        process.wait(timeout=10)
        assert process.poll() == -1 and not zygote.alive()
    finally:
        zygote.close()


def test_a_job_that_ends_before_the_host_reads_its_start_is_not_waited_out(pair, work, scratch, monkeypatch):
    """The zygote says a job's pid, then its exit. A host slow to read (its thread waiting for the GIL while the
    parent imports matplotlib, say) finds both lines in the pipe at once: both must be read then. A buffered
    ``readline`` kept the exit in a buffer that ``select`` cannot see, and the host waited for the job's deadline
    (34 s for `grader show`'s import check, one run in ten) and then called the job timed out."""
    zygote = pair[0]
    assert zygote.isolation["tier"]  # started: the handshake is not the job's
    original = zygote._read_message

    def slow(deadline: float, allow_timeout: bool = False):
        time.sleep(1.0)  # the job (one tiny check) has ended and said so by now
        return original(deadline, allow_timeout)

    monkeypatch.setattr(zygote, "_read_message", slow)
    started = time.monotonic()
    result = run(zygote, work, "t.chatty", scratch, seconds=15)
    assert not result.timed_out and time.monotonic() - started < 8
    assert values(result) == {"ok": True}


def test_a_retired_zygote_ends_its_job_and_neither_starts_again_nor_runs_one(scratch, work):
    """Ctrl-C during a redraw of `grader show --watch`: the workers stop for good, so the run's other jobs are not
    started on a zygote forked again (grading's jobs restart a zygote that died), and the run ends at once."""
    from autograder.errors import WorkerDied

    zygote = start_zygotes(1, scratch / "retired")[0]
    try:
        assert zygote.isolation["tier"]
        zygote.retire()
        zygote.process.wait(timeout=30)
        assert not zygote.alive()
        with pytest.raises(WorkerDied):
            zygote.start()
        with pytest.raises(WorkerDied):
            run(zygote, work, "t.chatty", scratch)
    finally:
        zygote.close()
