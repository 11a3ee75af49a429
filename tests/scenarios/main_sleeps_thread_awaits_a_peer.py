"""Healthy: main keeps the process alive in `while True: time.sleep(0.5)` while a thread of it waits for a peer's
answer on a socket (a service outside the job, at HW_PORT, that answers when it has one)."""

import os
import socket
import threading
import time


def listen() -> None:
    conn = socket.create_connection(("127.0.0.1", int(os.environ["HW_PORT"])))
    while conn.recv(4096):  # WAITS-HERE
        pass


threading.Thread(target=listen, name="peer-listener").start()
while True:
    time.sleep(0.5)  # KEEPS-ALIVE
