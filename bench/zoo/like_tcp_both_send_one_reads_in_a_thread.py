"""A trainer sends a local evaluation server a large checkpoint while the server sends its metrics; the server reads in a thread, slowly.

report: https://github.com/python/cpython/issues/86679
saw: both sides of a socket sending large messages at once: a deadlock unless one side reads while it sends.
mechanism: healthy: the server's reader thread drains the socket in pieces, asleep between them (it parses as it reads); both sends finish and both sides exit 0.
expect: healthy
"""
import multiprocessing as mp
import socket
import threading
import time

from _zoo import ready, seconds

SIZE = 32 << 20


def eval_server(listener, pause):
    conn, _ = listener.accept()

    def read_all():
        got = 0
        while got < SIZE:
            chunk = conn.recv(1 << 20)
            if not chunk:
                return
            got += len(chunk)
            time.sleep(pause)

    reader = threading.Thread(target=read_all)
    reader.start()
    conn.sendall(b"m" * SIZE)
    reader.join(timeout=300)


if __name__ == "__main__":
    listener = socket.create_server(("127.0.0.1", 0))
    server = mp.get_context("fork").Process(target=eval_server, args=(listener, seconds(40) / 32))
    server.start()
    sock = socket.create_connection(listener.getsockname())
    listener.close()
    ready()
    sock.sendall(b"c" * SIZE)
    got = 0
    while got < SIZE:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        got += len(chunk)
    server.join(timeout=120)
    print("exchanged", got, flush=True)
