"""The job forks a helper to pack a shard and waits for it in os.waitpid; the helper works at full CPU in one
function (its locals walk the data) and finishes after HW_PACK_S seconds. Healthy: never a hang.
With HW_PACK_SPIN=1 the helper instead waits for a free slot in a ring that nobody empties, re-reading the same
state at full CPU: a hang."""

import os
import time

from _ready import ready


def pack_shard(records, seconds):
    packed = 0
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:  # HANG-HERE:child
        packed += len(records[i % len(records)])
        i += 1
    return packed


def wait_for_slot(ring):
    while ring.count(0) < 1:  # HANG-HERE:spin
        pass
    return ring.index(0)


if __name__ == "__main__":
    seconds = float(os.environ.get("HW_PACK_S", "25"))
    records = [bytes([n % 251]) * (64 + n % 7) for n in range(50_000)]
    pid = os.fork()
    if pid == 0:
        if os.environ.get("HW_PACK_SPIN") == "1":
            wait_for_slot([1] * 64)
        pack_shard(records, seconds)
        os._exit(0)
    ready()
    _, status = os.waitpid(pid, 0)  # HANG-HERE:parent
    print("packed", status, flush=True)
