"""asyncio's child output read while it runs, then wait(): the child writes slowly for a while, then exits.

report: https://github.com/bytedance/SandboxFusion/issues/53
also: https://github.com/bojieli/ai-agent-book/pull/112
saw: the fix: drain stdout concurrently with wait(), and the same 1 MB of output returns.
mechanism: healthy: the loop reads the pipe as the child writes (in bursts, sleeping between them for a bounded time), so the child never blocks on a full pipe; wait() returns when it exits.
expect: healthy
"""
import asyncio
import sys

from _zoo import ready, seconds

WRITER = """import sys, time
for _ in range(20):
    sys.stdout.write('x' * 50_000); sys.stdout.flush(); time.sleep(float(sys.argv[1]))
"""


async def main():
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(seconds(20) / 20), stdout=asyncio.subprocess.PIPE
    )
    ready()
    out, _ = await asyncio.gather(child.stdout.read(), child.wait())
    print(len(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
