"""A concurrency limit leaks a slot on every call that raises: after two failures, the next call waits for ever.

report: https://github.com/microsoft/agent-governance-toolkit/issues/2928
saw: "leaks bounded-semaphore slots when the wrapped callable throws, deadlocking into permanent denial".
mechanism: acquire() without try/finally: each call that raises keeps its slot; with both slots gone, acquire() (no timeout) waits for a release no thread will make: main waits for that call's future, the pool's other thread waits for work only main would submit.
expect: hung code.deadlock
accept: io.lock_wait
"""
import threading
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready

limit = threading.BoundedSemaphore(2)


def call_tool(i):
    limit.acquire()  # HANG-HERE
    if i < 2:
        raise TimeoutError(f"tool call {i}: no answer")
    result = i * i
    limit.release()
    return result


if __name__ == "__main__":
    with ThreadPoolExecutor(max_workers=2) as pool:
        for i in range(2):
            try:
                pool.submit(call_tool, i).result()
            except TimeoutError as e:
                print(f"retrying after: {e}", flush=True)
        ready()
        print(pool.submit(call_tool, 2).result(), flush=True)
