"""A concurrency limit released in finally: the failed calls give their slots back, and the next call is just long.

report: https://github.com/microsoft/agent-governance-toolkit/issues/2928
saw: the fix: "Wrap ... in try/finally" so a call that raises releases its slot.
mechanism: healthy: main waits, with no timeout, for a call that holds a slot while it computes for a while, then releases it.
expect: healthy
"""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds

limit = threading.BoundedSemaphore(2)


def call_tool(i, s=0.0):
    limit.acquire()
    try:
        if i < 2:
            raise TimeoutError(f"tool call {i}: no answer")
        deadline, n = time.monotonic() + s, 0
        while time.monotonic() < deadline:
            n += sum(k * k for k in range(20000))  # a long tool call
        return n % 97
    finally:
        limit.release()


if __name__ == "__main__":
    with ThreadPoolExecutor(max_workers=2) as pool:
        for i in range(2):
            try:
                pool.submit(call_tool, i).result()
            except TimeoutError as e:
                print(f"retrying after: {e}", flush=True)
        ready()
        print(pool.submit(call_tool, 2, seconds(30)).result(), flush=True)
