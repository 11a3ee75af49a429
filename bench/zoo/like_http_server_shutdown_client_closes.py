"""Look-alike of http_server_shutdown_keepalive_held: shutdown() waits ~15 s for the dashboard poller's last request on its keep-alive connection, then returns.

report: https://github.com/python/cpython/issues/102156 (python/cpython#102156: shutdown returns once the client closes)
mechanism: the dashboard client lives in its own thread: it polls once, waits ~15 s for the run summary (asleep in
  pieces, no output), sends a last request and closes its connection. The main thread calls shutdown() at the end of
  training; serve_forever's thread sits in the handler's readline() on the kept-alive connection until that last request
  and the close, then serve_forever returns and shutdown() with it.
diagnosis: healthy: shutdown() waits on a server thread that waits on a socket whose client is alive and closes it.
expect: healthy
"""
import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

from _zoo import ready, seconds

STATE = {"step": 0, "loss": None}


class Metrics(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = json.dumps(STATE).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def dashboard(port, first_poll):
    dash = http.client.HTTPConnection("127.0.0.1", port)
    dash.request("GET", "/metrics")
    print("dashboard:", dash.getresponse().read().decode(), flush=True)
    first_poll.set()
    deadline = time.monotonic() + seconds(15)  # the dashboard renders its plots before the final poll
    while time.monotonic() < deadline:
        time.sleep(0.5)
    dash.request("GET", "/metrics")
    print("dashboard (final):", dash.getresponse().read().decode(), flush=True)
    dash.close()


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    polled = threading.Event()
    poller = threading.Thread(target=dashboard, args=(server.server_port, polled), name="dashboard")
    poller.start()
    polled.wait()
    for step in range(1, 4):
        STATE.update(step=step, loss=round(1.0 / step, 3))
    print("training done; stopping the metrics server", flush=True)
    ready()
    server.shutdown()  # waits until the dashboard's final request and close
    server.server_close()
    poller.join()
    print("bye", flush=True)
