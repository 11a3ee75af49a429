"""A metrics endpoint served by a non-daemon thread (socketserver's serve_forever as the thread's target): training
ends, and the interpreter's exit joins that thread, which only the server's shutdown() ends. `python
serve_forever_at_exit.py hang`: nothing calls it; `python serve_forever_at_exit.py SECONDS`: a threading.Timer calls
it after SECONDS, and the job ends."""

import http.server
import sys
import threading

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=server.serve_forever, name="metrics").start()
if sys.argv[1] != "hang":
    threading.Timer(float(sys.argv[1]), server.shutdown).start()
print("done", flush=True)
