"""Helpers the zoo's cases share (the runner, bench/zoo.py, reads each case's header, not this file).

- ``ready()``: a case says "the hang starts now" (or, for a look-alike, "the silent phase starts now") by
  appending the time and its pid to the file named in $ZOO_READY; the runner measures detection latency
  from the first line, and `inspect` waits for it.
- ``two_ranks(main)``: run ``main(rank)`` on 2 gloo ranks on this machine (torch.multiprocessing spawn).
- ``black_hole()`` / ``trickle_server()``: local TCP servers for network waits (no network needed).
- ``seconds(s)``: a look-alike's silent time, shortened under $ZOO_QUICK (the fast subset the tests run).
- ``set_after(event, s)``: a helper that works ``s`` seconds (asleep in pieces), then sets ``event``.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import http.client


def ready(tag: str = "ready") -> None:
    """The hang (or a look-alike's silent phase) starts now."""
    path = os.environ.get("ZOO_READY")
    if path:
        with open(path, "a") as f:
            f.write(f"{time.time():.3f} {os.getpid()} {tag}\n")


def seconds(s: float) -> float:
    """A look-alike's silent phase: ``s`` seconds, or a third of it under $ZOO_QUICK (at least 8 s)."""
    return max(8.0, s / 3) if os.environ.get("ZOO_QUICK") else s


def set_after(event, s: float) -> None:
    """A helper's work: ``s`` seconds asleep in pieces (alive, never one long timer), then ``event.set()``."""
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)
    event.set()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, below the kernel's ephemeral range (32768-60999 by default): no bind to port 0
    and no outgoing connection can take it before the job binds it (the tests' ports are 20000-31999)."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(1000):
        port = rng.randrange(10000, 20000)
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port in 10000-19999")


def connected(port: int, timeout: float = 10.0) -> http.client.HTTPConnection:
    """An HTTP connection to a server on 127.0.0.1:``port`` that is starting: tried every 0.1 s for ``timeout``."""
    import http.client

    end = time.monotonic() + timeout
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        try:
            conn.connect()
            return conn
        except OSError:
            if time.monotonic() >= end:
                raise
            time.sleep(0.1)


def _rank_main(rank: int, main: Callable[[int], None], world: int) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=world)
    main(rank)
    dist.destroy_process_group()


def two_ranks(main: Callable[[int], None], world: int = 2) -> None:
    """``main(rank)`` on ``world`` gloo ranks, each a spawned process started with RANK, WORLD_SIZE,
    LOCAL_RANK, MASTER_ADDR and MASTER_PORT in its environment, as torchrun starts them."""
    from multiprocessing import resource_tracker

    import torch.multiprocessing as mp

    resource_tracker.ensure_running()  # started before the ranks' environment is set: it is no rank
    ctx, port, procs = mp.get_context("spawn"), free_port(), []
    for rank in range(world):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                          WORLD_SIZE=str(world))
        p = ctx.Process(target=_rank_main, args=(rank, main, world), name=f"rank{rank}")
        p.start()
        procs.append(p)
    for p in procs:
        p.join()


def black_hole() -> int:
    """A port on 127.0.0.1 that accepts connections (from the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    _keep.append(s)
    return int(s.getsockname()[1])


def trickle_server(total: int, chunk: int, every_s: float) -> int:
    """A local HTTP server that sends a ``total``-byte body, ``chunk`` bytes every ``every_s`` seconds."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    _keep.append(srv)

    def serve() -> None:
        while True:
            conn, _ = srv.accept()
            conn.recv(65536)
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n".encode())
            sent = 0
            while sent < total:
                n = min(chunk, total - sent)
                conn.sendall(b"x" * n)
                sent += n
                time.sleep(every_s)
            conn.close()

    threading.Thread(target=serve, name="trickle-server", daemon=True).start()
    return int(srv.getsockname()[1])


_keep: list[socket.socket] = []
