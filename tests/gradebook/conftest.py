"""The gradebook tests' PostgreSQL: one throw-away server per session, a fresh database per test."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="session")
def server():
    """A throw-away PostgreSQL server on a unix socket in a temporary folder; yields its URL."""
    bin_dir = _binaries() or (Path(shutil.which("pg_ctl")).parent if shutil.which("pg_ctl") else None)
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="grader-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run the server as")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, socket_dir = root / "data", root
    try:
        subprocess.run(as_user + [str(bin_dir / "initdb"), "-D", str(data), "-U", "grader", "--auth=trust"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-l", str(root / "log"), "-o",
                                  f"-k {socket_dir} -c listen_addresses='' -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        output = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"the PostgreSQL server could not be started: {exc} {output.decode(errors='replace')[-300:]}")
    url = f"postgresql://grader@/postgres?host={socket_dir}"
    yield url
    subprocess.run(as_user + [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                   capture_output=True, timeout=120)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def database(server):
    """A fresh database on the server for one test; yields its URL."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install '.[postgres]')")
    name = f"gb_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield server.replace("/postgres?", f"/{name}?")
