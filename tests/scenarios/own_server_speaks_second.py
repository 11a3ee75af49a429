"""A trainer talks to a control server it runs on a thread of its own, over a loopback TCP connection: the client
waits for the server's greeting, the server for the client's request (mp.connection's authkey mismatch, cpython#123736;
urllib3#585's TLS handshake waiting in select() for a server that waits for a body). Each thread reads a socket whose
other end only its own process holds, and the one thread that could write to each is the other reader: neither ever
moves. `python own_server_speaks_second.py hang recv|select`: so. `python own_server_speaks_second.py twin recv|select
SECONDS`: the server loads its state for SECONDS (CPU) before it greets; the client waits the same way: `done`.
"""

import select
import socket
import sys
import threading
import time
import zlib


def server(listener: socket.socket, seconds: float | None) -> None:
    conn, _ = listener.accept()
    if seconds is None:
        conn.recv(1024)  # waits for a request before it greets
        return
    blob, end = bytes(range(256)) * 1024, time.monotonic() + seconds
    while time.monotonic() < end:
        zlib.compress(blob, 9)  # loads its state
    conn.sendall(b"hello")


if __name__ == "__main__":
    mode, how = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if mode == "twin" else None
    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=server, args=(listener, seconds), name="control-server", daemon=True).start()
    client = socket.create_connection(listener.getsockname())
    print("connected to the control server", flush=True)
    if how == "select":
        select.select([client], [], [])  # SELECT-HERE
    greeting = client.recv(1024)  # RECV-HERE
    print("done" if greeting == b"hello" else "no greeting", flush=True)
