"""A checkpoint uploaded by an executor thread at interpreter exit: the job lingers after its last line.

report: https://github.com/python/cpython/issues/80961
also: https://github.com/marin-community/marin/pull/2773
saw: "Interpreter exit blocks waiting for futures" of a ThreadPoolExecutor: the process lingers after its last output.
mechanism: healthy: at exit, concurrent.futures joins its worker threads; the one uploading the checkpoint moves bytes to a slow reader, then ends.
expect: healthy
"""
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds

READER = """import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1], flush=True)
c, _ = s.accept()
while c.recv(65536):
    time.sleep(float(sys.argv[1]))
"""


def upload(port, total):
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"x" * total)


if __name__ == "__main__":
    reader = subprocess.Popen([sys.executable, "-c", READER, str(seconds(25) / 128)], stdout=subprocess.PIPE)
    port = int(reader.stdout.readline())
    pool = ThreadPoolExecutor(1)
    pool.submit(upload, port, 8 << 20)
    print("training done; uploading the checkpoint", flush=True)
    ready()  # main returns; the interpreter's exit joins the upload thread
