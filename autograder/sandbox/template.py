"""The zygote template: a fresh interpreter that imports torch once and forks every zygote of a grader from itself.

A grader used to start each zygote as its own interpreter, so two zygotes imported torch twice (about 1.9 CPU
seconds and 140 MB of private memory each). The template pays that once: each zygote is a fork of it, sharing
torch's pages copy-on-write, and a zygote that has to be replaced (a crash, a hang) is forked again in
milliseconds. The template never runs a job or student code, and it holds nothing a job could use: it is started
with the same scrubbed environment a zygote had, and every zygote it forks closes the template's control socket
and gets its own session, its own pipes to the grader and (through :func:`autograder.sandbox.boot.boot`) its own
PID namespace, exactly as a zygote started on its own would.

Protocol (a ``SOCK_SEQPACKET`` socket pair, one end inherited by the template only): the grader sends one request
per zygote, ``{"environment": {...}, "cwd": "...", "warm_up": bool}`` with two file descriptors attached (the
zygote's stdin and stdout); the template answers, in order, ``{"pid": N}`` with a pidfd of that zygote attached.
The grader then talks to the zygote over those pipes as it would to a zygote it started itself. The message
``client`` with one socket attached makes that socket a second way in, answered the same way: a batch hands one to
each of its worker processes, so all their zygotes share one torch import. When the grader's own end closes, the
template kills every process it forked and exits.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import signal
import socket
from typing import Any, NoReturn

import torch

from autograder.sandbox import linux, zygote  # noqa: F401 - imported once here, for every zygote forked
from autograder.protocol import ENDED_FILE
from autograder.sandbox.procfs import children_of, exit_status, kill_group, private_memory

MAX_REQUEST = 1 << 16


def serve(control_fd: int, preload: str = "") -> NoReturn:
    """Fork a zygote for each request on ``control_fd`` until the grader closes its end; then kill them all and exit.

    Args:
        control_fd: The template's end of the grader's control socket.
        preload: ``module:function`` to call once before any zygote is forked, so that every zygote inherits what
            it imports (``grader check``'s: pytest and torch's first calls); '' for none.
    """
    linux.prctl_quietly(linux.PR_SET_DUMPABLE, 0)  # the grader's side: no ptrace, no /proc/<pid>/fd by students
    linux.prctl_quietly(linux.PR_SET_CHILD_SUBREAPER, 1)  # what a dead zygote leaves behind comes here, to be killed
    if preload:
        module, _, function = preload.partition(":")
        getattr(importlib.import_module(module), function)()
    owner = socket.socket(fileno=control_fd)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a wake-up on each child's exit (its orphans arrive here)
    zygotes: dict[int, str] = {}  # each zygote's pid and home (where the template says how it ended)
    warmed = False
    with selectors.DefaultSelector() as selector:
        selector.register(owner, selectors.EVENT_READ)
        selector.register(wake_read, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj == wake_read:
                    os.read(wake_read, 4096)
                    continue
                control = key.fileobj
                try:
                    data, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 2)
                except OSError:
                    data, fds = b"", []
                if not data and control is owner:
                    _kill_all(zygotes)
                    os._exit(0)  # no interpreter teardown: with torch loaded it takes most of a second
                if not data:  # a client gone (a batch worker): its zygotes end as their pipes close
                    selector.unregister(control)
                    control.close()
                    continue
                if data == b"client" and len(fds) == 1:  # another process of the grader's asks through this
                    selector.register(socket.socket(fileno=fds[0]), selectors.EVENT_READ)
                    continue
                request = _parse(data, fds)
                if request is None:
                    for fd in fds:
                        os.close(fd)
                    control.send(b'{"error": "malformed request"}')
                    continue
                if request.get("warm_up") and not warmed:  # a zygote that serves many jobs (a batch's)
                    warm_up()  # once here, inherited by every later zygote instead of paid by each
                    warmed = True
                pid = os.fork()
                if pid == 0:
                    os._exit(_become_zygote(request, fds))
                for fd in fds:
                    os.close(fd)
                zygotes[pid] = str(request.get("cwd") or "")
                try:
                    pidfds = [os.pidfd_open(pid)]  # before any reaping: it names this process, whatever happens next
                except (AttributeError, OSError):  # Linux < 5.3: the grader watches the pid instead
                    pidfds = []
                try:
                    socket.send_fds(control, [json.dumps({"pid": pid}).encode()], pidfds)
                finally:
                    for fd in pidfds:
                        os.close(fd)
            _reap(zygotes)


def warm_up() -> None:
    """Pay torch's lazy imports here once (the first optimizer step imports torch._dynamo, seconds) rather than in
    every forked job; touches no random state. Then back this process's private memory (about 200 MB after torch's
    import) with transparent huge pages, so each fork copies about 7,000 page-table entries instead of 50,000 and
    each job's exit unmaps as few (17-19 CPU ms less per job); a job writing to such a page still copies 4 KiB of
    it, so its private memory is unchanged. Both cost 1.5-1.8 CPU s once: worth it for the zygotes of a batch,
    which run hundreds of jobs, not for those of one submission, which run a dozen (docs/BATCH.md, "The cost per
    job"). Every zygote forked afterwards shares what this did."""
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([parameter], lr=0.1)
    (parameter * 2).sum().backward()
    optimizer.step()
    linux.collapse_huge_pages(private_memory())


def _parse(data: bytes, fds: list[int]) -> dict[str, Any] | None:
    try:
        request = json.loads(data)
    except ValueError:
        return None
    if not isinstance(request, dict) or len(fds) != 2 or not isinstance(request.get("environment"), dict):
        return None
    return request


def _become_zygote(request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: take the zygote's pipes, drop everything of the template's, then boot as a zygote."""
    try:
        os.setsid()  # its own process group: the grader kills this zygote (and nothing else) with killpg
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        linux.prctl_quietly(linux.PR_SET_PDEATHSIG, signal.SIGKILL)  # a template killed takes its zygotes along
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the control socket and other zygotes' pipes among them
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request["environment"].items()})
        os.chdir(str(request.get("cwd") or "/"))
        from autograder.sandbox.boot import boot

        boot()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a zygote that cannot boot just ends; the grader sees it exit
        return 1
    return 0


def _reap(zygotes: dict[int, str]) -> None:
    """Collect every child that ended, saying in its home how a zygote ended (the grader reads it when the zygote
    stopped answering: an import of a session that ended its process); kill any child that is not a zygote (a dead
    zygote's orphan)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        home = zygotes.pop(pid, "")
        if home:
            try:
                with open(os.path.join(home, ENDED_FILE), "w") as handle:
                    json.dump(exit_status(status), handle)
            except OSError:  # its home is gone: nobody asks any more
                pass
    for pid in children_of(os.getpid()):
        if pid not in zygotes:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _kill_all(zygotes: dict[int, str]) -> None:
    """Kill every zygote's process group and every orphan, and reap them."""
    for pid in list(zygotes):
        kill_group(pid)
    for _ in range(100):
        _reap(zygotes)
        if not children_of(os.getpid()):
            return
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
