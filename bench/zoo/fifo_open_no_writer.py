"""A trainer opens its control FIFO to read commands, and nobody ever opens it to write: open() blocks forever.

report: https://github.com/golang/go/issues/33050
also: https://github.com/JuliaLang/julia/issues/58442
saw: "if no data write, it will block on open() function ... block forever" (a goroutine 34 minutes in the open call).
mechanism: opening a FIFO for reading blocks until some process opens it to write; the controller that would have opened it never started, and nothing in the job ever will.
expect: hung process.waits_on
"""
import os
import tempfile

from _zoo import ready

if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "control")
    os.mkfifo(path)
    ready()
    with open(path) as commands:  # HANG-HERE
        for line in commands:
            print("command:", line.strip(), flush=True)
