"""Main asks a server child of its own over TCP on 127.0.0.1; the child's handler waits on a multiprocessing Queue
whose producer died (`python socket_to_a_server_child.py hang`): no network is waited for, but the child, and the
child waits on the queue main holds too (a cycle). `twin`: the producer puts the answer after 600 s."""

import multiprocessing as mp
import os
import socket
import sys
import time

from _ready import ready


def producer(q, arg: str) -> None:
    if arg == "hang":
        os._exit(1)
    time.sleep(600)
    q.put(b"answer")


def server(listener, q) -> None:
    conn, _ = listener.accept()
    conn.recv(10)
    conn.sendall(q.get())  # HANG-HERE


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    listener = socket.create_server(("127.0.0.1", 0))
    ctx.Process(target=server, args=(listener, q), daemon=True).start()
    ctx.Process(target=producer, args=(q, sys.argv[1]), daemon=True).start()
    sock = socket.create_connection(listener.getsockname())
    sock.sendall(b"ask")
    ready()
    print("answer", sock.recv(10), flush=True)
