"""A single-node Slurm for the tests: munged, slurmctld and slurmd in the foreground, all state in one folder."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

# Debian's packages (slurmctld, slurmd, munge, slurm-client; .ci/run installs them): the daemons and the commands
DAEMONS = ("munged", "slurmctld", "slurmd")
COMMANDS = ("sbatch", "scontrol", "scancel", "squeue", "sinfo")
SEARCH = "/usr/sbin:/usr/bin:/sbin:/bin"


def missing_binaries() -> list[str]:
    """The daemons and commands of a single-node Slurm that are not installed."""
    return [name for name in (*DAEMONS, *COMMANDS) if shutil.which(name, path=SEARCH) is None]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SlurmCluster:
    """One node, one partition, no accounting, no systemd: the daemons are this process's children.

    Args:
        root: An empty folder every parent of which others may traverse (munged refuses its socket otherwise).
        cpus: The CPUs the node announces (more than the machine has is fine: jobs only share them).
    """

    def __init__(self, root: Path, cpus: int = 4) -> None:
        self.root = root
        self.cpus = cpus
        self.host = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.socket = root / "munge" / "munge.socket"
        self.children: list[subprocess.Popen] = []
        self._logs: list[BinaryIO] = []
        self.env = {"SLURM_CONF": str(self.conf), "PATH": SEARCH, "HOME": str(root)}

    def _write_config(self) -> None:
        for folder in ("munge", "state", "spool", "log"):
            (self.root / folder).mkdir(mode=0o755)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        r = self.root
        self.conf.write_text("\n".join([
            "ClusterName=gradertest",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SlurmdParameters=config_overrides",  # the node may announce more CPUs and memory than it has
            "ReturnToService=2",
            "KillWait=5",
            "MinJobAge=600",  # finished jobs stay visible to scontrol (there is no accounting database)
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=16384 State=UNKNOWN",
            f"PartitionName=grading Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
            ""]))

    def start(self, timeout: float = 60.0) -> None:
        """Start munged, slurmctld and slurmd, and wait until the node takes jobs.

        Raises:
            RuntimeError: If a daemon exits or the node is not idle in time (with the daemons' logs).
        """
        self._write_config()
        r = self.root
        self._spawn("munged", ["munged", "-F", f"--key-file={r}/munge/munge.key", f"--socket={self.socket}",
                               f"--pid-file={r}/munge/munged.pid", f"--log-file={r}/log/munged.log",
                               f"--seed-file={r}/munge/munged.seed"])
        self.until(lambda: self.socket.exists(), timeout, "munged's socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.host, "-f", str(self.conf)])
        self.until(lambda: self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip() == "idle", timeout,
                    "the node to be idle")

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.stderr", "wb")  # noqa: SIM115 - closed by stop()
        self._logs.append(log)
        self.children.append(subprocess.Popen([shutil.which(argv[0], path=SEARCH) or argv[0], *argv[1:]],
                                              stdout=log, stderr=subprocess.STDOUT, env=self.env))

    def until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait for ``ready()``; a daemon's exit or the timeout raises RuntimeError with the daemons' logs."""
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [child.args[0] for child in self.children if child.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what} (daemons exited: {dead}):\n{self.logs()}")
            time.sleep(0.3)

    def logs(self) -> str:
        """The tail of every daemon's log, for a failure message."""
        parts = []
        for log in sorted((self.root / "log").iterdir()):
            lines = log.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {log.name}\n" + "\n".join(lines))
        return "\n".join(parts)

    def run(self, *argv: str, check: bool = True, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run a Slurm command (or any) against this cluster."""
        result = subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd, env={**self.env, **(env or {})},
                                timeout=timeout)
        if check and result.returncode:
            raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr}\n{self.logs()}")
        return result

    def job(self, job_id: str) -> dict[str, str]:
        """``scontrol show job``'s fields of one job (or array task, ``123_2``)."""
        text = self.run("scontrol", "-o", "show", "job", job_id).stdout.splitlines()[0]
        return dict(re.findall(r"(\w+)=(\S*)", text))

    def wait_done(self, job_ids: list[str], timeout: float) -> None:
        """Wait until no job (or array) of ``job_ids`` is pending or running.

        Raises:
            RuntimeError: After ``timeout`` seconds, with the queue and the daemons' logs.
        """
        deadline = time.monotonic() + timeout
        while True:
            queued = self.run("squeue", "-h", "-o", "%i %T %r", "-j", ",".join(job_ids), check=False).stdout.strip()
            if not queued:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"jobs still queued after {timeout:.0f} s:\n{queued}\n{self.logs()}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Cancel every job, then stop slurmd, slurmctld and munged (in that order), killing what lingers."""
        if self.children and self.children[-1].poll() is None:
            self.run("scancel", "--full", "--user=root", check=False)
        for child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        for log in self._logs:
            log.close()
