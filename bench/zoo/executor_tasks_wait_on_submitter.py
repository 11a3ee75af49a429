"""A thread pool's tasks wait on a queue that the thread collecting their results fills only after it has them.

report: https://github.com/rust-threadpool/rust-threadpool/issues/56
also: https://github.com/jwiegley/async-pool/issues/4
saw: "the danger is when you block in the job execution on something that is outside of it and that depends on the
job execution as well".
mechanism: main waits in ex.map's result for the tasks; each task waits in queue.get for a config that main puts
only after the results: main -> task thread -> queue -> main, a cycle inside one process.
expect: hung code.deadlock
accept: process.waits_on
"""
import queue
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready


def shard(config_q, i):
    config = config_q.get()  # the config comes after the results
    return i * config["scale"]


if __name__ == "__main__":
    configs = queue.Queue()
    ready()
    with ThreadPoolExecutor(2) as ex:
        totals = list(ex.map(shard, [configs, configs], range(2)))  # HANG-HERE
        for _ in range(2):
            configs.put({"scale": 2})
    print(totals, flush=True)
