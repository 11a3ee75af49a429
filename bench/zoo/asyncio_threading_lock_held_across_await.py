"""An async shard fetcher's token cache is guarded by a threading.Lock held across an await: the second fetch blocks the event loop's own thread.

report: https://github.com/Azure/azure-sdk-for-python/issues/11543
also: https://github.com/Azure/azure-sdk-for-python/pull/11591 (the fix: an asyncio.Lock); https://github.com/Delgan/loguru/pull/972
saw: "I've faced a deadlock when trying to get access to several blobs" (azure-core 1.5.0, asyncio); the fix's words: "1. coroutine A acquires the lock 2. A awaits another coroutine, yielding to the loop 3. coroutine B attempts to acquire the lock 4. `threading.Lock.acquire()` blocks the thread and thus also the loop 5. B never yields, A never resumes, the lock is never released".
mechanism: the bearer-token policy takes a threading.Lock (not an asyncio one) and, with it held, awaits the token request; the loop runs the next fetch's coroutine, whose `with self._lock` blocks the loop's thread in a futex. The holder is the same thread's suspended coroutine, which only that loop could resume: the process has one thread, parked on a lock nobody running holds.
expect: hung code.deadlock
"""
import asyncio
import threading
import time

from _zoo import ready


class TokenCredential:
    async def get_token(self, scope):
        ready()  # the next coroutine the loop runs blocks its thread on the policy's lock
        await asyncio.sleep(0.2)  # the POST to the token endpoint
        return {"token": f"eyJ0eXAi.{scope}", "expires_on": time.time() + 3600}


class BearerTokenPolicy:
    def __init__(self, credential, scope):
        self._credential, self._scope = credential, scope
        self._lock = threading.Lock()  # the bug: a thread lock in async code
        self._token = None

    async def on_request(self, request):
        with self._lock:  # HANG-HERE
            if self._token is None or self._token["expires_on"] < time.time() + 300:
                self._token = await self._credential.get_token(self._scope)  # awaits with the lock held
        request["headers"]["Authorization"] = "Bearer " + self._token["token"]


async def fetch_shard(policy, i):
    request = {"url": f"https://store.example/train/shard-{i:05d}.tar", "headers": {}}
    await policy.on_request(request)
    await asyncio.sleep(0.05)  # the GET
    return i


async def main():
    policy = BearerTokenPolicy(TokenCredential(), "https://storage.example/.default")
    print("fetching 8 shards", flush=True)
    shards = await asyncio.gather(*(fetch_shard(policy, i) for i in range(8)))
    print("fetched", len(shards), "shards", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
