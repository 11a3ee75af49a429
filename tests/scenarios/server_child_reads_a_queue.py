"""Main asks a server child of its own over TCP; the server answers with what it gets from a multiprocessing queue,
whose one producer exited first (`hang`: the queue's pipe is held only by main and the server, each waiting on the
other) or sleeps 600 s before it puts (`twin`: the producer holds the pipe too and will write it). A watcher child
waits on main too (it reads a pipe only main could write): its chain runs through main and the server, and ends where
theirs does."""

import multiprocessing as mp
import os
import socket
import sys
import time
from multiprocessing.connection import Connection

from _ready import ready


def producer(q: "mp.Queue[bytes]", hang: bool) -> None:
    if hang:
        os._exit(1)
    time.sleep(600)
    q.put(b"answer")


def watcher(conn: Connection) -> None:
    conn.recv()


def server(port_q: "mp.Queue[int]", q: "mp.Queue[bytes]") -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port_q.put(s.getsockname()[1])
    c, _ = s.accept()
    c.recv(10)
    c.sendall(q.get())  # SERVER-HERE


if __name__ == "__main__":
    hang = sys.argv[1] == "hang"
    port_q: "mp.Queue[int]" = mp.Queue()
    q: "mp.Queue[bytes]" = mp.Queue()
    mp.Process(target=server, args=(port_q, q), daemon=True).start()
    r, w = mp.Pipe(duplex=False)  # main keeps w and never writes
    mp.Process(target=watcher, args=(r,), daemon=True).start()
    p = mp.Process(target=producer, args=(q, hang), daemon=True)
    p.start()
    if hang:
        p.join(30)  # gone before the look
    c = socket.create_connection(("127.0.0.1", port_q.get(timeout=30)))
    c.sendall(b"ask")
    time.sleep(0.5)  # the server reads the question and waits on its queue
    ready()
    print("answer", c.recv(10), flush=True)  # HANG-HERE
