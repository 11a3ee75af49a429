"""At the interpreter's exit, main joins an uploader thread that sends 12 MB to a local server it started, which reads
256 KB every quarter of a second: the exit ends when the upload has (`python exit_upload_cycle.py 1`). With `hang`, the server stops
reading after the first MB to read its standard input, a pipe whose write end only this process holds and never
writes: the server waits on the exiting process, whose exit waits on the uploader, which waits on the server."""

import socket
import subprocess
import sys
import threading

SERVER = r"""
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
got = 0
while True:
    b = c.recv(1 << 18)
    if not b:
        break
    got += len(b)
    if sys.argv[1] == "hang" and got > (1 << 20):
        sys.stdin.read()
    time.sleep(0.25)
"""


def upload(port):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"x" * (12 << 20))  # HANG-HERE
    c.close()
    print("upload done", flush=True)


if __name__ == "__main__":
    server = subprocess.Popen([sys.executable, "-c", SERVER, sys.argv[1]], stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    threading.Thread(target=upload, args=(int(server.stdout.readline()),)).start()
    print("main done", flush=True)
