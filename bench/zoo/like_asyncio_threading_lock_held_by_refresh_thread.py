"""The same threading.Lock in the token policy, held by a refresh thread through a slow token request: the loop's thread waits on it, then the fetches go on.

report: https://github.com/Azure/azure-sdk-for-python/issues/11543
saw: a blocking lock in async code stalls the event loop while another thread holds it; here the holder is a live thread whose request ends.
mechanism: healthy: a background thread refreshes the token under the policy's threading.Lock, and the token endpoint is slow (~25 s, asleep in pieces). The first fetch's coroutine blocks the loop's thread on that lock (a futex, no timeout), held by a live thread that is not waiting on the loop; the refresh ends, the lock is released and every fetch completes. No coroutine awaits with the lock held.
expect: healthy
"""
import asyncio
import threading
import time

from _zoo import ready, seconds


class BearerTokenPolicy:
    def __init__(self, scope):
        self._scope = scope
        self._lock = threading.Lock()
        self._token = None
        self.refreshing = threading.Event()

    def refresh(self, slow_s):  # a background thread refreshes the token
        with self._lock:
            self.refreshing.set()
            deadline = time.monotonic() + slow_s  # the token endpoint is slow today
            while time.monotonic() < deadline:
                time.sleep(0.5)
            self._token = {"token": f"eyJ0eXAi.{self._scope}", "expires_on": time.time() + 3600}

    async def on_request(self, request):
        with self._lock:  # blocks the loop's thread while the refresh thread holds it (no await inside)
            token = self._token
        request["headers"]["Authorization"] = "Bearer " + token["token"]


async def fetch_shard(policy, i):
    request = {"url": f"https://store.example/train/shard-{i:05d}.tar", "headers": {}}
    await policy.on_request(request)
    await asyncio.sleep(0.05)  # the GET
    return i


async def main(policy):
    print("fetching 8 shards", flush=True)
    ready()
    shards = await asyncio.gather(*(fetch_shard(policy, i) for i in range(8)))
    print("fetched", len(shards), "shards", flush=True)


if __name__ == "__main__":
    policy = BearerTokenPolicy("https://storage.example/.default")
    threading.Thread(target=policy.refresh, args=(seconds(25),), name="token-refresh", daemon=True).start()
    policy.refreshing.wait()
    asyncio.run(main(policy))
