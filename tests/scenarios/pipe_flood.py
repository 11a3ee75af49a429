"""A healthy trainer reads a helper's 200 MiB stream from a pipe, a little slower than the helper writes it, so the
helper spends its time between writing and waiting in a write on the full pipe. The helper runs unbuffered
(PYTHONUNBUFFERED=1, as `hangwatch run` starts a job): a stop that lands in one of its writes cuts it short and the
rest of that write is lost. With HW_NAP=S the helper sleeps S seconds before each write (4 chunks of 512 KiB, each read
in 0.8 s): a read that finds it asleep, quiet, may stop it just as it wakes into the write.
Prints what arrived; exits 1 unless every byte came."""

import os
import subprocess
import sys
import time

from _ready import ready

NAP = float(os.environ.get("HW_NAP", "0"))
CHUNK, CHUNKS = (1 << 19, 4) if NAP else (1 << 20, 200)

if sys.argv[1:2] == ["--helper"]:
    chunk = b"y" * CHUNK
    for _ in range(CHUNKS):
        if NAP:
            time.sleep(NAP)  # NAP-HERE
        sys.stdout.buffer.write(chunk)  # WRITE-HERE
    sys.exit(0)

helper = subprocess.Popen(
    [sys.executable, __file__, "--helper"], stdout=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"}
)
if os.environ.get("HW_READY"):
    with open(os.environ["HW_READY"], "a") as f:
        f.write(f"helper {helper.pid}\n")
ready("trainer")
got = 0
while chunk := helper.stdout.read(65536):
    got += len(chunk)
    time.sleep(0.1 if NAP else 0.0005)
helper.wait(10)
print(f"got {got} of {CHUNK * CHUNKS} bytes", flush=True)
sys.exit(0 if got == CHUNK * CHUNKS else 1)
