"""What a process waiting at process-group setup waits for: the store's address and world size
(read from the arguments of torch's rendezvous frames with py-spy --locals, or from a launcher's
command line), and how many have joined (the store's accepted TCP connections, from this machine's
socket tables; nothing is sent to the store, since a client of ours would count as a rank)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from hangwatch import signatures as sg
from hangwatch.capture.proc import PROC, fd_target, read_text
from hangwatch.capture.stacks import PY_SPY_ENV, dump_command
from hangwatch.launcher import launcher_args, launcher_option
from hangwatch.records.evidence import ProcessInfo, ProcessSample, RendezvousRead, Role

TIMEOUT_S = 3.0
# The last store read from each waiting process's frames, by (pid, start time): the arguments of a frame it still
# waits in do not change, and a locals read that fails at one look (py-spy past its timeout on a loaded machine)
# would otherwise lose the store's address and its count of joined ranks from that look's verdict.
StoreRead = tuple[str | None, int | None, int | None, int | None, str | None]  # host, port, world, rank, backend
NOT_READ: StoreRead = (None, None, None, None, None)
_LAST_READ: dict[tuple[int, float], StoreRead] = {}
_LAST_READ_MAX = 64
LISTEN, ESTABLISHED = "0A", "01"  # /proc/net/tcp states
# The frames whose arguments name the store (torch 2.13, torch/distributed/rendezvous.py).
STORE_FRAMES = {
    "_create_c10d_store": ("hostname", "port", "rank", "world_size"),
    "_env_rendezvous_handler": ("master_addr", "master_port", "rank", "world_size"),
    "_tcp_rendezvous_handler": (None, None, "rank", "world_size"),
}


def waiting_at_setup(samples: tuple[ProcessSample, ...] | list[ProcessSample]) -> bool:
    """Whether the last sample's main thread is inside torch's rendezvous / process-group setup."""
    if not samples or not samples[-1].threads:
        return False
    t = samples[-1].threads[0]
    return any(sg.is_rendezvous_frame(f) for f in t.frames)


def read_rendezvous(info: ProcessInfo, py_spy: str | None) -> RendezvousRead:
    """The rendezvous a process waits in: from its frames' arguments (ranks) or its command line
    (torchrun's launcher), with the store's connections as this machine sees them."""
    if info.role == Role.LAUNCHER:
        host, port, world, rank, backend = _from_launcher(info.cmdline)
    else:
        read, key = _from_frames(info.pid, py_spy), (info.pid, info.create_time)
        if read is not None:  # read (a frame that names no store: nothing to say, nothing kept)
            _LAST_READ.pop(key, None)
            if read[1] is not None:
                _LAST_READ[key] = read
            while len(_LAST_READ) > _LAST_READ_MAX:
                del _LAST_READ[next(iter(_LAST_READ))]
        host, port, world, rank, backend = read or _LAST_READ.get(key, NOT_READ)
    hosts, clients, connected = _store_sockets(info.pid, port)
    return RendezvousRead(
        host=host,
        port=port,
        world_size=world,
        rank=rank,
        backend=backend,
        hosts_store=hosts,
        clients=clients,
        connected=connected,
    )


def _int(v: Any) -> int | None:
    try:
        return int(str(v).strip('"'))
    except ValueError:
        return None


def _from_frames(pid: int, py_spy: str | None) -> StoreRead | None:
    """The store its frames name, or None where they could not be read (no py-spy, a read past its timeout)."""
    command = dump_command(py_spy, pid, with_locals=True) if py_spy else None
    if command is None:
        return None
    try:
        p = subprocess.run(command[0], capture_output=True, text=True, timeout=TIMEOUT_S, env=PY_SPY_ENV, check=False)
        if p.returncode != 0:
            return None
        threads: list[dict[str, Any]] = json.loads(p.stdout)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return None
    host = port = world = rank = None
    backend: str | None = None
    for t in threads[:1]:
        for f in t.get("frames", []):
            name = str(f.get("name", "")).rsplit(".", 1)[-1]
            values = {str(v.get("name")): str(v.get("repr", "")) for v in (f.get("locals") or [])}
            if name == "init_process_group" and backend is None:
                backend = values.get("backend", "").strip('"') or None
            keys = STORE_FRAMES.get(name)
            if keys is None:
                continue
            h, pt, r, w = (values.get(k) if k else None for k in keys)
            if name == "_tcp_rendezvous_handler":  # result = ("tcp", "host:port", ...)
                netloc = values.get("result", "").split(",")[1:2]
                if netloc and ":" in netloc[0]:
                    h, pt = netloc[0].strip(' "').rsplit(":", 1)
            host = host or (h.strip('"') if h else None)
            port = port or (_int(pt) if pt else None)
            rank = rank if rank is not None else (_int(r) if r else None)
            world = world or (_int(w) if w else None)
    return host, port, world, rank, backend


def _from_launcher(cmdline: tuple[str, ...]) -> tuple[str | None, int | None, int | None, int | None, str | None]:
    """torchrun's rendezvous from its arguments: c10d at --rdzv-endpoint, else static at the master."""
    argv = launcher_args(list(cmdline)) or list(cmdline)
    nnodes = launcher_option(argv, "--nnodes")
    world = _int(nnodes.split(":")[-1]) if nnodes else None
    node = _int(launcher_option(argv, "--node-rank", "--node_rank") or "")
    backend = launcher_option(argv, "--rdzv-backend", "--rdzv_backend") or "static"
    endpoint = launcher_option(argv, "--rdzv-endpoint", "--rdzv_endpoint")
    if backend != "static" and endpoint:
        host, _, port = endpoint.rpartition(":")
        return host or endpoint, _int(port) if port else 29400, world, node, backend
    master = launcher_option(argv, "--master-addr", "--master_addr") or "127.0.0.1"
    return master, _int(launcher_option(argv, "--master-port", "--master_port") or "29500"), world, node, backend


def _store_sockets(pid: int, port: int | None) -> tuple[bool | None, int | None, bool | None]:
    """(this process listens on the port, connections accepted on it here, this process is connected to it)."""
    if port is None:
        return None, None, None
    inodes = set()
    try:
        for fd in (PROC / str(pid) / "fd").iterdir():
            target = fd_target(pid, int(fd.name)) or ""
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    except (OSError, ValueError):
        return None, None, None
    listens = accepted = 0
    connected = False
    for proto in ("tcp", "tcp6"):
        for line in (read_text(PROC / str(pid) / "net" / proto) or "").splitlines()[1:]:
            f = line.split()
            if len(f) < 10:
                continue
            local_port = int(f[1].rsplit(":", 1)[1], 16)
            remote_port = int(f[2].rsplit(":", 1)[1], 16)
            if f[3] == LISTEN and local_port == port and f[9] in inodes:
                listens += 1
            elif f[3] == ESTABLISHED and local_port == port:
                accepted += 1
            if f[3] == ESTABLISHED and remote_port == port and f[9] in inodes:
                connected = True
    hosts = listens > 0
    return hosts, accepted if hosts else None, connected
