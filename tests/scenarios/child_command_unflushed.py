"""A parent drives a Python engine child over a line protocol: it writes a command to the child's stdin and reads
the reply from its stdout (jtauber/gtp#10). `hang`: the command is never flushed, so it sits in the parent's own
buffer: the child waits in readline() on its stdin, the parent in readline() on the child's stdout, a cycle through
two pipes. `twin SECONDS`: the parent flushes; the child computes for SECONDS before it answers."""

import subprocess
import sys
import time

from _ready import ready


def engine(think_s: float) -> None:
    while True:
        line = sys.stdin.readline()  # ENGINE-READS
        if not line or line.strip() == "quit":
            return
        end, n = time.monotonic() + think_s, 0
        while time.monotonic() < end:  # the search: CPU
            n += sum(range(1000))
        sys.stdout.write(f"= move {n % 9}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "engine":
        engine(float(sys.argv[2]))
        sys.exit(0)
    twin = sys.argv[1] == "twin"
    think = sys.argv[2] if twin else "1"
    proc = subprocess.Popen(
        [sys.executable, __file__, "engine", think], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    proc.stdin.write("genmove b\n")
    if twin:
        proc.stdin.flush()
    ready()
    reply = proc.stdout.readline()  # HANG-HERE
    print("engine:", reply.strip(), flush=True)
    proc.stdin.write("quit\n")
    proc.stdin.close()
    proc.wait(timeout=30)
    print("done", flush=True)
