"""A job asks its own metrics server for a reply before the code that accepts connections runs.

report: https://github.com/varnishcache/varnish-cache/pull/4154
saw: "You can send off your request before your peer has accepted you, but the response will not return before you
have been dequeued from the backlog": the connect succeeds and the request is sent, and the recv waits.
mechanism: the job binds and listens on a local port, connects to it and sends its request, then waits for the reply;
the thread that would accept is started only after the reply comes. The kernel queued the connection in the listening
socket's accept queue; only the job's own process holds that socket, and its only thread waits for the reply. (Named
a network wait, as a remote server that never answers is, and said as what the kernel shows: the accept queue of its own
socket.)
expect: hung io.network_wait
accept: code.deadlock, process.waits_on
"""
import socket
import threading

from _zoo import ready


def serve(srv):
    conn, _ = srv.accept()
    conn.recv(100)
    conn.sendall(b"ok")


if __name__ == "__main__":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    client = socket.create_connection(srv.getsockname())
    client.sendall(b"GET /health")
    ready()
    reply = client.recv(100)  # HANG-HERE: nobody accepts
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
