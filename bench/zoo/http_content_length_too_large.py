"""A POST whose Content-Length says more than the body holds: the server waits for the rest, the client for the reply.

report: https://github.com/Orange-OpenSource/hurl/issues/4099
also: https://github.com/fastify/fastify/issues/3245
saw: "A Content-Length larger than the body, against a server that reads the declared length, hangs until killed, while a matched length returns right away."
mechanism: a cycle through one socket between two processes: the client (this process) waits in recv() for the response; the server (a child, http.server) waits in recv() for body bytes the client will never send.
expect: hung process.waits_on
accept: io.network_wait
"""
import subprocess
import sys

from _zoo import connected, free_port, ready

SERVER = """import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))  # waits for every declared byte
        self.send_response(200); self.end_headers(); self.wfile.write(b"got %d" % len(body))
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""

if __name__ == "__main__":
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    conn = connected(port)
    conn.putrequest("POST", "/upload")
    conn.putheader("Content-Length", "100")
    conn.endheaders(b"hello")  # 5 bytes of the 100 declared
    ready()
    print(conn.getresponse().read(), flush=True)  # HANG-HERE
