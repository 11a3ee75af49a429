"""Healthy: the main thread reads a response that a slow server delivers a few bytes at a time."""

import socket
import threading
import time

from _ready import ready


def slow_server(listener):
    conn, _ = listener.accept()
    while True:
        conn.sendall(b"x" * 16)
        time.sleep(0.05)


def download(sock):
    got = 0
    while True:
        chunk = sock.recv(4096)  # RECV-HERE
        got += len(chunk)
        if got >= 64 and got < 80:
            ready()


if __name__ == "__main__":
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    threading.Thread(target=slow_server, args=(listener,), daemon=True).start()
    download(socket.create_connection(listener.getsockname()))
