"""A job asks its own metrics server for a reply; the server's thread accepts once it has loaded.

report: https://github.com/varnishcache/varnish-cache/pull/4154
saw: a connection in the accept queue is a hang only if nobody will accept it.
mechanism: healthy: the server thread loads for a while (asleep in pieces), then accepts and answers; the job's recv
returns.
expect: healthy
"""
import socket
import threading
import time

from _zoo import ready, seconds


def serve(srv):
    for _ in range(int(seconds(20))):
        time.sleep(1)  # loading its exporters
    conn, _ = srv.accept()
    conn.recv(100)
    conn.sendall(b"ok")


if __name__ == "__main__":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
    client = socket.create_connection(srv.getsockname())
    client.sendall(b"GET /health")
    ready()
    reply = client.recv(100)
