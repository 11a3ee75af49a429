"""A checkpoint uploaded by an executor thread at exit, to a reader that stopped reading: the job never exits.

report: https://github.com/python/cpython/issues/80961
also: https://github.com/rohanpm/more-executors/issues/176
saw: the interpreter's exit blocks joining a ThreadPoolExecutor worker; the process never ends after its last output.
mechanism: at exit, concurrent.futures joins the upload thread; it blocks in sendall on a full socket whose reader (a local helper) accepted the connection and then parked on an event nobody sets.
expect: hung process.waits_on
accept: io.network_wait, code.deadlock
"""
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready

READER = """import socket, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1], flush=True)
c, _ = s.accept()
threading.Event().wait()  # waits for a "go" that never comes, before its first read
"""


def upload(port, total):
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"x" * total)  # HANG-HERE


if __name__ == "__main__":
    reader = subprocess.Popen([sys.executable, "-c", READER], stdout=subprocess.PIPE)
    port = int(reader.stdout.readline())
    pool = ThreadPoolExecutor(1)
    pool.submit(upload, port, 64 << 20)
    print("training done; uploading the checkpoint", flush=True)
    ready()  # main returns; the interpreter's exit joins the upload thread
