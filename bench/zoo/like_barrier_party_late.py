"""Three loader threads meet at a threading.Barrier each epoch; one reads a big shard and arrives late.

report: https://github.com/h2oai/datatable/pull/2521
saw: threads waiting at a barrier are a hang only if a party will never arrive.
mechanism: healthy: the third thread computes for a while (a CPU-bound decode) before it reaches the barrier; then all three pass and main's joins return.
expect: healthy
"""
import threading
import time

from _zoo import ready, seconds

barrier = threading.Barrier(3)


def shard(i):
    if i == 2:
        end, n = time.monotonic() + seconds(20), 0
        while time.monotonic() < end:  # decoding a big shard
            n = (n * 31 + 7) % 1000003
    barrier.wait()


if __name__ == "__main__":
    threads = [threading.Thread(target=shard, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    ready()
    for t in threads:
        t.join()
    print("epoch done", flush=True)
