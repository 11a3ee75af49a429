"""A training job stops its metrics HTTP server with shutdown() while its own dashboard's keep-alive connection is
still open (python/cpython#102156). The handler speaks HTTP/1.1, so after each answer its thread reads the next request
on the same connection; serve_forever checks its shutdown flag only between requests, and shutdown() waits for it on an
event. `python http_server_shutdown_keepalive.py hang`: main holds the client's end of that connection and is the one
waiting in shutdown(), so the server thread never reads a byte again. `... SECONDS`: the dashboard client is a thread
of its own, which waits SECONDS (asleep in pieces) after its polls, then closes the connection: shutdown() returns,
`done`."""

import http.client
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

STATE = {"step": 0}


class Metrics(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as dashboards and browsers expect

    def do_GET(self) -> None:
        body = json.dumps(STATE).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def poll(dash: http.client.HTTPConnection) -> None:
    for step in range(1, 4):
        STATE["step"] = step
        dash.request("GET", "/metrics")
        print("dashboard:", dash.getresponse().read().decode(), flush=True)


def dashboard(dash: http.client.HTTPConnection, seconds: float) -> None:
    end = time.monotonic() + seconds  # the run summary takes a while
    while time.monotonic() < end:
        time.sleep(0.25)
    dash.close()


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    dash = http.client.HTTPConnection("127.0.0.1", server.server_port)
    poll(dash)
    if sys.argv[1:] != ["hang"]:
        threading.Thread(target=dashboard, args=(dash, float(sys.argv[1])), name="dashboard").start()
    print("training done; stopping the metrics server", flush=True)
    server.shutdown()  # HANG-HERE
    server.server_close()
    print("done", flush=True)
