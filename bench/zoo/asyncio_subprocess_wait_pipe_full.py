"""asyncio's Process.wait() on a child whose piped output nobody reads: the child fills the pipe and blocks.

report: https://github.com/bytedance/SandboxFusion/issues/53
also: https://github.com/bojieli/ai-agent-book/pull/112
saw: "asyncio.subprocess.Process wait() ... when the output is large (about 200 KB), deadlock"; the fix drains both pipes concurrently with wait().
mechanism: the event loop pauses reading the child's stdout at its StreamReader's limit; the child blocks writing into the full pipe and never exits; the loop waits in epoll for an exit that never comes.
expect: hung child.wait
accept: process.waits_on, code.deadlock
"""
import asyncio
import sys

from _zoo import ready


async def main():
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; sys.stdout.write('x' * 1_000_000)", stdout=asyncio.subprocess.PIPE
    )
    ready()
    await child.wait()
    print(len(await child.stdout.read()), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
