"""A healthy trainer: a tokenizer helper dumps 400 KB to its stdout, a pipe the trainer reads only later; meanwhile
the helper sits in ``sys.stdout.buffer.write`` on the full pipe. The trainer reads once $HW_TMP/go exists (or after
60 s), prints what it got, and exits 1 unless every byte came. With PYTHONUNBUFFERED=1 (which `hangwatch run` sets,
as do many images and `python -u`) the helper's stdout has no buffered writer: a look that stops it mid-write makes
the write return a short count, which the caller never sees, and the rest is lost (65,536 of 400,000 bytes arrive,
the helper exits 0). HW_MODE picks the helper's writer: buffer (default), text (sys.stdout.write), raw (a loop of
os.write, which writes the rest: the control)."""

import os
import subprocess
import sys
import time

from _ready import ready

SIZE = 400_000


def dump(mode):
    tokens = b"x" * SIZE
    if mode == "buffer":
        sys.stdout.buffer.write(tokens)  # WRITE-buffer
    elif mode == "text":
        sys.stdout.write(tokens.decode())  # WRITE-text
    else:
        while tokens:
            tokens = tokens[os.write(1, tokens) :]
    sys.stdout.flush()


if __name__ == "__main__" and sys.argv[1:2] == ["--helper"]:
    dump(sys.argv[2])
    sys.exit(0)

for step in range(5):
    print(f"step {step}", flush=True)
mode = os.environ.get("HW_MODE", "buffer")
helper = subprocess.Popen([sys.executable, __file__, "--helper", mode], stdout=subprocess.PIPE)
wchan = f"/proc/{helper.pid}/wchan"
while "pipe_write" not in open(wchan).read() and helper.poll() is None:  # noqa: SIM115 - read once, closed by gc
    time.sleep(0.01)  # until the pipe is full and the helper waits in its write
if os.environ.get("HW_READY"):
    with open(os.environ["HW_READY"], "a") as f:
        f.write(f"helper {helper.pid}\n")
ready("trainer")
go = os.path.join(os.environ.get("HW_TMP", "/tmp"), "go")
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.05)
data = helper.stdout.read()
helper.wait(10)
print(f"got {len(data)} of {SIZE} bytes, helper exit {helper.returncode}", flush=True)
sys.exit(0 if len(data) == SIZE else 1)
