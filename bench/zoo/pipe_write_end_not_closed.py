"""A parent reads a pipe to its end after forking the writer, but never closed its own copy of the write end.

report: https://github.com/vstinner/python-ptrace/issues/43
also: https://github.com/dimitri/pgcopydb/pull/563
saw: "if I remove 'close(errpipe_write)' ... the '_createParent' will be blocked"; pgcopydb's follow process "did not close its end of the pipe, thereby preventing the EOF".
mechanism: a read on a pipe ends (EOF) only when every write end is closed; the reader still holds one itself, so after the child has written and exited the read blocks forever.
expect: hung process.waits_on
"""
import os

from _zoo import ready


def read_status(r):
    chunks = []
    while True:
        chunk = os.read(r, 4096)  # HANG-HERE
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


if __name__ == "__main__":
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, b"exec ok\n")
        os._exit(0)
    os.waitpid(pid, 0)
    ready()
    print(read_status(r), flush=True)
