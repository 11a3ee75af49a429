"""A prefetch thread downloads the next shard; the training loop waits on its queue forever."""

import queue
import socket
import threading

from _ready import ready

batches = queue.Queue(maxsize=2)


def prefetch(addr):
    conn = socket.create_connection(addr)
    conn.sendall(b"GET /shard-3 HTTP/1.0\r\n\r\n")
    batches.put(conn.recv(1 << 20))  # HANG-HERE


def train():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    threading.Thread(target=prefetch, args=(server.getsockname(),), name="prefetcher", daemon=True).start()
    ready()
    return batches.get()


if __name__ == "__main__":
    train()
