"""The other end of a connected socket, as an inode another process's fd can be matched to.

A unix socket's peer is read from the kernel's sock_diag netlink interface (``ss -x`` reads the same: the
``/proc/net/unix`` table lists no peers); a TCP connection's from ``/proc/PID/net/tcp{,6}``, where a
loopback connection's two ends are two rows with their addresses swapped. Both are read in the network
namespace of the process asked about (netlink only when it is hangwatch's own).
"""

from __future__ import annotations

import os
import socket
import struct

from hangwatch.capture.proc import PROC, read_text

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
UDIAG_SHOW_PEER = 0x4
UNIX_DIAG_PEER = 2
_NLMSG = struct.Struct("=IHHII")  # struct nlmsghdr
_REQ = struct.Struct("=BBHIII8s")  # struct unix_diag_req
_MSG = struct.Struct("=BBBBI8s")  # struct unix_diag_msg
_RTA = struct.Struct("=HH")  # struct rtattr
RECV_TIMEOUT_S = 1.0
MAX_REPLY_BYTES = 64 << 20  # a host with a million unix sockets answers in ~100 MiB; stop well before


def _align(n: int) -> int:
    return (n + 3) & ~3


def unix_peers() -> dict[int, int] | None:
    """inode -> its peer's inode, for every connected unix socket of hangwatch's network namespace; None when
    the kernel does not answer (no sock_diag, a seccomp filter)."""
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG)
    except OSError:
        return None
    with s:
        s.settimeout(RECV_TIMEOUT_S)
        req = _REQ.pack(socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, UDIAG_SHOW_PEER, b"\xff" * 8)
        try:
            s.send(_NLMSG.pack(_NLMSG.size + len(req), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + req)
            return _read_dump(s)
        except OSError:
            return None


def _read_dump(s: socket.socket) -> dict[int, int] | None:
    peers: dict[int, int] = {}
    total = 0
    while total < MAX_REPLY_BYTES:
        data = s.recv(1 << 16)
        total += len(data)
        off = 0
        while off + _NLMSG.size <= len(data):
            length, kind, _, _, _ = _NLMSG.unpack_from(data, off)
            if length < _NLMSG.size:
                return peers
            if kind == NLMSG_DONE:
                return peers
            if kind == NLMSG_ERROR:
                return None
            body = off + _NLMSG.size
            if body + _MSG.size <= off + length:
                inode = _MSG.unpack_from(data, body)[4]
                peer = _peer_attr(data, body + _MSG.size, off + length)
                if peer:
                    peers[inode] = peer
            off += _align(length)
    return peers


def _peer_attr(data: bytes, off: int, end: int) -> int | None:
    while off + _RTA.size <= end:
        length, kind = _RTA.unpack_from(data, off)
        if length < _RTA.size:
            return None
        if kind == UNIX_DIAG_PEER and length >= _RTA.size + 4:
            return int(struct.unpack_from("=I", data, off + _RTA.size)[0])
        off += _align(length)
    return None


def _same_netns(pid: int) -> bool:
    try:
        return os.readlink(PROC / str(pid) / "ns" / "net") == os.readlink(PROC / "self" / "ns" / "net")
    except OSError:
        return False


def _tcp_rows(pid: int, state: bool = False) -> list[tuple[str, ...]]:
    """(local, remote, inode) of every TCP socket in ``pid``'s network namespace, addresses as the kernel
    prints them (hex); with ``state``, its state too (``0A``: listening)."""
    rows: list[tuple[str, ...]] = []
    for name in ("tcp", "tcp6"):
        for line in (read_text(PROC / str(pid) / "net" / name) or "").splitlines()[1:]:
            f = line.split()
            if len(f) > 9:
                rows.append((f[1], f[2], f[9], f[3]) if state else (f[1], f[2], f[9]))
    return rows


LISTEN = "0A"  # a TCP socket's state in /proc/net/tcp: listening


def backlog_listener(pid: int, inode: str) -> str | None:
    """Where ``pid``'s loopback TCP connection ``inode`` has not been accepted: its other end waits in the accept
    queue of a listening socket (the kernel's row for it has no inode: no process holds it yet), the inode of that
    listener (bound to the port it connected to), else None."""
    rows = _tcp_rows(pid, state=True)
    mine = next((r for r in rows if r[2] == inode), None)
    queued = ("01", "03")  # established or SYN_RECV: in the accept queue (not a closing one's FIN_WAIT, TIME_WAIT)
    if mine is None or not any(r[0] == mine[1] and r[1] == mine[0] and r[2] == "0" and r[3] in queued for r in rows):
        return None
    addr, port = mine[1].rsplit(":", 1)
    wildcard = {"00000000", "00000000000000000000000000000000"}
    found = [r[2] for r in rows if r[3] == LISTEN and r[2] != "0" and r[0].rsplit(":", 1) in ([addr, port],)]
    found += [
        r[2]
        for r in rows
        if r[3] == LISTEN and r[2] != "0" and r[0].rsplit(":", 1)[1] == port and r[0].rsplit(":", 1)[0] in wildcard
    ]
    return found[0] if len(set(found)) == 1 else None  # two listeners (SO_REUSEPORT): which one queued it is unknown


def peers_on_this_host(pid: int) -> bool:
    """Every connected TCP socket of ``pid`` goes to this host (loopback, or the address it connects from): a rank
    with a peer on another host is in a world larger than this host's, whatever its arguments say."""
    try:
        mine = {os.readlink(PROC / str(pid) / "fd" / fd) for fd in os.listdir(PROC / str(pid) / "fd")}
    except OSError:
        return False
    for local, remote, inode, state in _tcp_rows(pid, state=True):
        if state != "01" or f"socket:[{inode}]" not in mine:
            continue
        ip, here = remote.rsplit(":", 1)[0], local.rsplit(":", 1)[0]
        if ip != here and not ip.endswith("7F") and ip != "00000000000000000000000001000000":
            return False  # (127.x.x.x reads ...7F in the kernel's byte order; ::1 as the last)
    return True


def connected_among(pids: list[int]) -> bool:
    """Each of ``pids`` has a connected TCP socket, and the other end of every one of them is held by one of
    ``pids``: they talk to each other alone (a world's ranks and the store one of them serves), to no other process
    of this host or another (a second launch of the same job on this host would show as its peers)."""
    held: dict[str, int] = {}
    for pid in pids:
        try:
            fds = [os.readlink(PROC / str(pid) / "fd" / fd) for fd in os.listdir(PROC / str(pid) / "fd")]
        except OSError:
            return False
        held.update({fd[8:-1]: pid for fd in fds if fd.startswith("socket:[")})
    rows = _tcp_rows(pids[0], state=True) if pids else []
    ends = {(local, remote): inode for local, remote, inode, _ in rows}
    connected = {pid: 0 for pid in pids}
    for local, remote, inode, state in rows:
        if state != "01" or inode not in held:
            continue
        if ends.get((remote, local)) not in held:
            return False  # its other end is another process's, or on another host
        connected[held[inode]] += 1
    return all(connected.values())


def peer_inode(pid: int, inode: str, unix: dict[int, int] | None = None) -> str | None:
    """The inode of the other end of ``pid``'s socket ``inode`` when that end is on this host (a unix socket,
    a loopback TCP connection), else None. ``unix``: the unix peers already read (``unix_peers()``)."""
    for local, remote, ino in (rows := _tcp_rows(pid)):
        if ino == inode:
            return next((i for loc, rem, i in rows if loc == remote and rem == local and i != "0"), None)
    if not inode.isdigit() or not _same_netns(pid):
        return None
    peers = unix if unix is not None else unix_peers()
    peer = (peers or {}).get(int(inode))
    return str(peer) if peer else None
