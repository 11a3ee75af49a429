"""The same tasks waiting on a config queue, filled by a loader thread that reads the config slowly, then puts it.

report: https://github.com/rust-threadpool/rust-threadpool/issues/56
saw: a task waiting on a queue is a hang only if no thread left will ever put to it.
mechanism: healthy: a loader thread, alive (asleep in pieces, as a slow read would be), puts the configs; the tasks
return and main's ex.map ends.
expect: healthy
"""
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds


def shard(config_q, i):
    config = config_q.get()
    return i * config["scale"]


def loader(config_q, s):
    end = time.monotonic() + s
    while time.monotonic() < end:
        time.sleep(0.5)
    for _ in range(2):
        config_q.put({"scale": 2})


if __name__ == "__main__":
    configs = queue.Queue()
    threading.Thread(target=loader, args=(configs, seconds(40)), name="config-loader").start()
    ready()
    with ThreadPoolExecutor(2) as ex:
        totals = list(ex.map(shard, [configs, configs], range(2)))
    print(totals, flush=True)
