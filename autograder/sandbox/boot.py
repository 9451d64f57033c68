"""A zygote's first steps, in the process the template forked for it: read the configuration, enter a PID namespace."""

from __future__ import annotations

import os

from autograder.sandbox.linux import (
    CLONE_NEWPID,
    CLONE_NEWUSER,
    PR_SET_PDEATHSIG,
    prctl,
    unshare,
    write_id_maps,
)
from autograder.sandbox.procfs import exit_status
from autograder.sandbox.tiers import TIERS


def _read_config_line() -> dict:
    import json

    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 1)  # one byte at a time: never read past the configuration line
        if not chunk:
            break
        data += chunk
    return json.loads(data or b"{}")


def boot() -> None:
    """Read the configuration from stdin, enter a PID namespace, then run the zygote (autograder.sandbox.zygote).

    Called in a process the template forked (autograder.sandbox.template), with the zygote's pipes as stdin and
    stdout and nothing else of the template's open.

    The zygote runs as PID 1 of a new PID namespace (with a user namespace when not root), so every process a
    job starts stays inside it: the zygote can kill them all with ``kill(-1)``, they cannot signal the zygote
    (the kernel ignores signals to a namespace's init from inside it), and when the zygote dies they all die.
    This process then only waits for the zygote, says how it ended, and exits with it.
    """
    import sys

    config = _read_config_line()
    pidns, note = _enter_pid_namespace(config)
    if pidns:
        _wait_from_outside()
    from autograder.sandbox.zygote import main

    sys.exit(main(config, pidns=pidns, note=note))


def _enter_pid_namespace(config: dict) -> tuple[bool, str]:
    """Unshare a PID namespace if the configuration's tiers allow it: (whether it did, why not)."""
    tiers = TIERS[: TIERS.index(config.get("max_tier", TIERS[-1])) + 1] if config.get("max_tier") in TIERS else TIERS
    if "namespaces" not in tiers:
        return False, ""
    try:
        if os.geteuid() == 0:
            unshare(CLONE_NEWPID)
        else:
            uid, gid = os.getuid(), os.getgid()
            unshare(CLONE_NEWUSER | CLONE_NEWPID)
            write_id_maps(uid, gid)
    except OSError as exc:
        return False, f"no PID namespace for the worker: {exc}"
    return True, ""


def _wait_from_outside() -> None:
    """Fork: the child returns to become the zygote (PID 1 of the namespace just unshared, if any); this process
    waits for it, writes ``{"zygote_exit": ...}`` (how it ended) to the grader, and exits with it."""
    import json
    import signal

    child = os.fork()
    if child == 0:
        try:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(child, 0)
    try:
        os.write(1, json.dumps({"zygote_exit": exit_status(status)}).encode() + b"\n")
    except OSError:  # the grader is gone, or stopped listening
        pass
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def boot_spawned() -> None:
    """A zygote started as a fresh interpreter (no fork, :mod:`autograder.sandbox.spawned`): read the configuration
    and run the zygote (no preload: it shares a template's work with forks, and there are none); the host waits for
    this process itself."""
    import sys

    from autograder.sandbox.zygote import main

    sys.exit(main(_read_config_line()))
