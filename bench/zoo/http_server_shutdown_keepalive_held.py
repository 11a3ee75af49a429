"""A training job stops its metrics HTTP server with shutdown() while its own poller's keep-alive connection is still open: shutdown() never returns.

report: https://github.com/python/cpython/issues/102156 (python/cpython#102156)
also: https://github.com/csernazs/pytest-httpserver/issues/263 (stuck in server.shutdown(), serve_forever inside a handler)
saw: "using serve_forever() ... and a self.shutdown() from another thread ... if i send any amount of request in a browser,
  before i SIGINT, self.shutdown() does not return, and i cannot shut down"; only closing the browser's connection lets it return.
mechanism: the handler speaks HTTP/1.1, so after each response BaseHTTPRequestHandler.handle() loops and blocks in
  rfile.readline() for the next request on the same connection. serve_forever() checks its shutdown flag only between
  requests, and its thread is inside that handler. shutdown() waits on an Event that serve_forever sets when it returns.
  The other end of the kept-alive connection is the dashboard client that the main thread opened and never closed, and
  the main thread is the one waiting in shutdown(): main -> server thread -> socket -> main.
diagnosis: hung, code.deadlock: MainThread waits in server.shutdown() at http_server_shutdown_keepalive_held.py:53 (socketserver's
  __is_shut_down.wait()); "metrics-server" is in Metrics.handle_one_request -> rfile.readline() on the connection whose
  client end `dash` (opened at http_server_shutdown_keepalive_held.py:46) the main thread holds open and never closes.
expect: hung code.deadlock
accept: process.waits_on
"""
import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from _zoo import ready

STATE = {"step": 0, "loss": None}


class Metrics(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as dashboards and browsers expect

    def do_GET(self):
        body = json.dumps(STATE).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    dash = http.client.HTTPConnection("127.0.0.1", server.server_port)  # the built-in dashboard's client
    for step in range(1, 4):
        STATE.update(step=step, loss=round(1.0 / step, 3))
        dash.request("GET", "/metrics")
        print("dashboard:", dash.getresponse().read().decode(), flush=True)
    print("training done; stopping the metrics server", flush=True)
    ready()
    server.shutdown()  # HANG-HERE
    server.server_close()
    print("bye", flush=True)
