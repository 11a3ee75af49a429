"""A POST with a matching Content-Length to a server that takes a while to answer: both wait, then the reply comes.

report: https://github.com/Orange-OpenSource/hurl/issues/4099
saw: "a matched length returns right away"; here the server computes for a bounded time first.
mechanism: healthy: the server has the whole body and works on it (CPU) for a bounded time before it answers; the client waits in recv() meanwhile.
expect: healthy
"""
import subprocess
import sys

from _zoo import connected, free_port, ready, seconds

SERVER = """import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        end = time.time() + float(sys.argv[2])
        while time.time() < end:
            sum(range(10000))
        self.send_response(200); self.end_headers(); self.wfile.write(b"got %d" % len(body))
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).handle_request()
"""

if __name__ == "__main__":
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(seconds(20))])
    conn = connected(port)
    conn.request("POST", "/upload", body=b"hello", headers={"Content-Length": "5"})
    ready()
    print(conn.getresponse().read(), flush=True)
    server.wait()
