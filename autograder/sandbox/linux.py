"""Linux isolation primitives for the worker, and the tiers they add up to.

Pure standard library (ctypes system calls), so the zygote can use it before and after importing torch. Each
primitive raises ``OSError`` when the kernel refuses; the worker decides at run time which of them work here
(see ``autograder.sandbox.zygote``) and the grader records the resulting tier in every report.

Tiers, each including the ones before it:

``rlimits``
    CPU time, address space, file size, open files and (where the kernel enforces it) process count limits;
    a session of its own; wall-clock limit and tree kill from outside; a subreaper that kills leftovers.
``landlock``
    Landlock rules: reads only below the Python installation, system libraries and the job's own copy of the
    submission; writes only to the job's private temporary folder; no TCP bind/connect (ABI >= 4); no signals
    to or abstract-socket connections with processes outside the sandbox (ABI >= 6).
``namespaces``
    New PID, mount, network, IPC and UTS namespaces per job (plus a user namespace when not root): the job is
    PID 1 of its namespace (killing it kills every descendant), sees only its own processes in a fresh /proc,
    has no network interface, and the grader's files, the instructor's material and other users' folders are
    hidden behind empty tmpfs mounts.
``uid``
    When the grader runs as root: the job runs as a separate unprivileged user, so it cannot signal, trace or
    read the grader and RLIMIT_NPROC applies.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

LINUX = sys.platform.startswith("linux")


class _NoLibc:
    """Elsewhere than Linux (the runtime without fork on macOS and Windows): every call refuses, as a kernel that
    lacks the feature would (``prctl_quietly`` then does nothing, ``landlock_abi`` is 0)."""

    def __getattr__(self, name: str) -> Any:
        def refuse(*args: Any) -> int:
            raise OSError(errno.ENOSYS, f"{name} is Linux's")

        return refuse


# The process's own symbols hold libc's: finding libc's file (ctypes.util.find_library) runs ldconfig, a process
# of its own, in every process that imports this module.
_libc: Any = ctypes.CDLL(None, use_errno=True) if LINUX else _NoLibc()


_libc.syscall.restype = ctypes.c_long


_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


_libc.unshare.argtypes = [ctypes.c_int]


_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


CLONE_NEWNS = 0x00020000


CLONE_NEWUTS = 0x04000000


CLONE_NEWIPC = 0x08000000


CLONE_NEWUSER = 0x10000000


CLONE_NEWPID = 0x20000000


CLONE_NEWNET = 0x40000000


MS_RDONLY = 1


MS_NOSUID = 2


MS_NODEV = 4


MS_NOEXEC = 8


MS_REMOUNT = 32


MS_BIND = 4096


MS_REC = 16384


MS_PRIVATE = 1 << 18


MADV_COLLAPSE = 25


HUGE_PAGE_SIZE_FILE = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"


PR_SET_PDEATHSIG = 1


PR_SET_DUMPABLE = 4


PR_SET_NO_NEW_PRIVS = 38


PR_SET_CHILD_SUBREAPER = 36


PR_CAP_AMBIENT = 47


PR_CAP_AMBIENT_CLEAR_ALL = 4


def _check(result: int, what: str) -> int:
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def prctl(option: int, arg: int = 0) -> None:
    """Call prctl(2) with one argument."""
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    """Move the calling process into new namespaces (PID: its next child becomes PID 1 of the new one)."""
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """mount(2)."""
    def enc(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def write_id_maps(uid: int, gid: int) -> None:
    """Map the caller's own uid and gid into the user namespace it just created (identity mapping)."""
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Clear every capability of the calling thread (effective, permitted, inheritable, ambient)."""
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def drop_to_user(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` for good (root only): no supplementary groups, all capabilities gone."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(1, "could not drop to the sandbox user")


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def expose_only(folder: str, keep: list[str], writable: bool = False, size: str = "1m") -> None:
    """Replace ``folder`` by an empty tmpfs in which only ``keep`` (paths below it) reappear, read-only.

    Must run inside a private mount namespace with CAP_SYS_ADMIN there.
    """
    wanted = sorted({p for p in keep if inside(p, folder) and p != folder and os.path.exists(p)})
    outermost = [p for p in wanted if not any(inside(p, q) and p != q for q in wanted)]
    handles = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in outermost]
    try:
        mode = "1777" if writable else "0755"
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={size}")
        for path, handle in handles:
            if os.path.isdir(f"/proc/self/fd/{handle}"):
                os.makedirs(path, mode=0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                with open(path, "a"):
                    pass
            bind_read_only(f"/proc/self/fd/{handle}", path)
        if not writable:
            mount(None, folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, f"mode={mode}")
    finally:
        for _, handle in handles:
            os.close(handle)


def bind_read_only(source: str, target: str) -> None:
    """Bind-mount ``source`` (with everything mounted below it) on ``target``, the top mount read-only."""
    mount(source, target, None, MS_BIND | MS_REC)
    current = os.statvfs(target).f_flag
    locked = current & (MS_NOSUID | MS_NODEV | MS_NOEXEC | os.ST_NOATIME | os.ST_NODIRATIME)
    if current & os.ST_RELATIME:
        locked |= 1 << 21  # MS_RELATIME
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | locked
    mount(None, target, None, flags)


def make_mounts_private() -> None:
    """Stop mount events from propagating between the new mount namespace and the host."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def mount_proc() -> None:
    """Mount a /proc that shows the caller's PID namespace only."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "arm64": (444, 445, 446)}


FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3


FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15


FS_REFER = 1 << 13


_FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1


SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 if Landlock is unavailable."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None or not LINUX:
        return 0
    result = _libc.syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return int(result) if result > 0 else 0


def landlock_fs_rights(abi: int) -> int:
    """Every filesystem right the given ABI knows (all of them are handled, i.e. denied unless allowed)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def landlock_restrict(read: Iterable[str], write: Iterable[str], devices: Iterable[str],
                      abi: int | None = None) -> dict[str, bool]:
    """Restrict the calling thread (and its future children) with Landlock; nothing else is reachable.

    Args:
        read: Folders and files that may be read (and executed).
        write: Folders where anything may be created, written and removed.
        devices: Device files that may be read and written (``/dev/null`` ...).
        abi: The ABI to use (detected by default).

    Returns:
        Which optional protections are in force: ``net`` (no TCP bind/connect) and ``scope`` (no signals to,
        no abstract-socket connections with processes outside the sandbox).

    Raises:
        OSError: If Landlock is unavailable or refuses.
    """
    abi = landlock_abi() if abi is None else abi
    if abi < 1:
        raise OSError(38, "Landlock is not available")
    create, add_rule, restrict_self = _SYSCALLS[platform.machine()]
    handled = landlock_fs_rights(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    ruleset = _check(_libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                                   ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        rules = [(p, READ) for p in read] + [(p, handled) for p in write]
        rules += [(p, FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) for p in devices]
        for path, rights in rules:
            try:
                handle = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path that does not exist here needs no rule
            try:
                if not os.path.isdir(f"/proc/self/fd/{handle}"):
                    rights &= _FILE_ONLY
                rule = _PathBeneathAttr(rights & handled, handle)
                _check(_libc.syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule),
                                     ctypes.c_uint32(0)), f"landlock_add_rule {path}")
            finally:
                os.close(handle)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        _check(_libc.syscall(restrict_self, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return {"net": abi >= 4, "scope": abi >= 6}


def collapse_huge_pages(regions: Iterable[tuple[int, int]]) -> None:
    """Back the whole huge pages inside these address ranges with transparent huge pages now (``MADV_COLLAPSE``,
    Linux >= 6.1). Where the kernel refuses (an older kernel, no huge page free) the memory stays as it was:
    this only makes later forks cheaper."""
    try:
        size = int(Path(HUGE_PAGE_SIZE_FILE).read_text())
    except (OSError, ValueError):
        return  # no transparent huge pages in this kernel
    for start, end in regions:
        first, last = -(-start // size) * size, end // size * size
        if last > first:
            _libc.madvise(first, last - first, MADV_COLLAPSE)


def prctl_quietly(option: int, value: int) -> None:
    try:
        prctl(option, value)
    except OSError:
        pass
