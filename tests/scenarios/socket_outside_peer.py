"""The job asks a local service over a socket and waits for its answer with no timeout, as a logger's
``finish()`` waits for its upload service. The service left the job's tree (double-forked into a session of its
own, as a daemon reused across runs is). HW_SOCK: "unix" (a socketpair) or "tcp" (a loopback connection).
HW_PEER says what the service does: "blocked" (waits with no timeout and never answers: a hang), "work" (hashes
at full CPU for HW_PEER_S seconds, then answers: healthy), "sleep" (sleeps HW_PEER_S seconds, then answers).
The service's pid is written to $HW_TMP/writer.pid: it is outside the job, so the test ends it by that pid."""

import hashlib
import os
import socket
import threading
import time

from _ready import ready


def service(conn, mode, seconds):
    conn.recv(100)
    if mode == "blocked":
        threading.Event().wait()  # HANG-HERE:peer
    elif mode == "work":
        digest, deadline = b"", time.monotonic() + seconds
        while time.monotonic() < deadline:
            digest = hashlib.sha256(digest + b"chunk").digest()
    else:
        time.sleep(seconds)
    conn.sendall(b"uploaded\n")
    os._exit(0)


def pair(kind):
    if kind == "unix":
        return socket.socketpair()
    with socket.create_server(("127.0.0.1", 0)) as srv:
        client = socket.create_connection(srv.getsockname())
        server, _ = srv.accept()
    return client, server


def finish(conn):
    conn.sendall(b"finish\n")
    ready()
    return conn.recv(100)  # HANG-HERE


if __name__ == "__main__":
    mode, seconds = os.environ.get("HW_PEER", "blocked"), float(os.environ.get("HW_PEER_S", "10"))
    mine, theirs = pair(os.environ.get("HW_SOCK", "unix"))
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            mine.close()
            with open(os.path.join(os.environ["HW_TMP"], "writer.pid"), "w") as f:
                f.write(str(os.getpid()))
            service(theirs, mode, seconds)
        os._exit(0)
    os.waitpid(pid, 0)
    theirs.close()
    while not os.path.exists(os.path.join(os.environ["HW_TMP"], "writer.pid")):
        time.sleep(0.01)
    print("finished:", finish(mine), flush=True)
