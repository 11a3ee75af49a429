"""What a blocked thread is waiting on: its system call and the file descriptor behind it.

``/proc/PID/task/TID/syscall`` holds the syscall number and arguments of a sleeping thread; for
calls whose first argument is a file descriptor we resolve it (socket, pipe, file). Sockets are
matched to /proc/net/{tcp,tcp6,udp,udp6} by inode for their addresses.
"""

from __future__ import annotations

import os
import platform
import socket
import struct

from hangwatch.capture.proc import PROC, read_text

# Syscalls whose first argument is an fd, by architecture (asm/unistd_64.h, asm-generic/unistd.h).
_FD_SYSCALLS = {
    "x86_64": {0: "read", 1: "write", 17: "pread64", 19: "readv", 42: "connect", 43: "accept", 44: "sendto",
               45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 288: "accept4", 74: "fsync", 75: "fdatasync"},
    "aarch64": {63: "read", 64: "write", 67: "pread64", 65: "readv", 203: "connect", 202: "accept",
                206: "sendto", 207: "recvfrom", 211: "sendmsg", 212: "recvmsg", 242: "accept4", 82: "fsync",
                83: "fdatasync"},
}
_TABLE = _FD_SYSCALLS.get(platform.machine(), {})


def blocked_call(pid: int, tid: int) -> tuple[str, int] | None:
    """(syscall name, fd) of a thread sleeping in an fd-taking syscall, else None."""
    raw = read_text(PROC / str(pid) / "task" / str(tid) / "syscall")
    if not raw:
        return None
    parts = raw.split()
    try:
        name = _TABLE.get(int(parts[0]))
        fd = int(parts[1], 16)
    except (ValueError, IndexError):
        return None
    return (name, fd) if name else None


def _hex_addr(field: str) -> str:
    addr, port = field.split(":")
    raw = bytes.fromhex(addr)
    if len(raw) == 4:
        host = socket.inet_ntop(socket.AF_INET, struct.pack("<I", int(addr, 16)))
    else:
        words = struct.unpack("<4I", raw)
        host = socket.inet_ntop(socket.AF_INET6, struct.pack(">4I", *words))
    return f"{host}:{int(port, 16)}"


class SocketTables:
    """One SocketTable per network namespace for a capture sample: the kernel's tables belong to
    the namespace, so processes that share it (a whole job, usually) share one read."""

    def __init__(self) -> None:
        self._by_ns: dict[str, SocketTable] = {}

    def for_pid(self, pid: int) -> SocketTable:
        """The socket table of the network namespace ``pid`` lives in (read once per namespace)."""
        try:
            ns = os.readlink(PROC / str(pid) / "ns" / "net")
        except OSError:
            ns = f"pid:{pid}"
        if ns not in self._by_ns:
            self._by_ns[ns] = SocketTable(pid)
        return self._by_ns[ns]


class SocketTable:
    """inode -> "tcp 1.2.3.4:5 -> 6.7.8.9:10", read lazily once per capture sample."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._table: dict[str, str] | None = None

    def lookup(self, inode: str) -> str | None:
        """``local -> remote`` of a socket inode, or None."""
        if self._table is None:
            self._table = {}
            for proto in ("tcp", "tcp6", "udp", "udp6"):
                text = read_text(PROC / str(self._pid) / "net" / proto) or ""
                for line in text.splitlines()[1:]:
                    f = line.split()
                    if len(f) > 9:
                        try:
                            self._table[f[9]] = f"{proto.rstrip('6')} {_hex_addr(f[1])} -> {_hex_addr(f[2])}"
                        except (ValueError, OSError):
                            continue
        return self._table.get(inode)


def describe_fd(pid: int, fd: int, sockets: SocketTable) -> str | None:
    """What ``fd`` of ``pid`` is, in words a finding can quote (a TCP peer, a pipe, a path)."""
    try:
        target = os.readlink(PROC / str(pid) / "fd" / str(fd))
    except OSError:
        return None
    if target.startswith("socket:["):
        inode = target[len("socket:["):-1]
        return sockets.lookup(inode) or "socket (unix or other)"
    if target.startswith("pipe:"):
        return "pipe"
    fs = filesystem_of(pid, target) if target.startswith("/") else None
    return f"{target} ({fs})" if fs else target


def filesystem_of(pid: int, path: str) -> str | None:
    """The filesystem type of the mount ``path`` lives on, as ``pid`` sees it (nfs4, fuse.s3fs, ext4...)."""
    raw = read_text(PROC / str(pid) / "mounts")
    best, fstype = "", None
    for line in (raw or "").splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mount = parts[1].replace("\\040", " ")
        if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
            best, fstype = mount, parts[2]
    return fstype
