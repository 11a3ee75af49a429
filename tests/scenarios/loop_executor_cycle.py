"""An asyncio program reads a child's stdout with a blocking read on the loop's executor (`run_in_executor`). The loop
waits on its own wake-up socket, which only the executor thread's result writes to. argv[1]: `12`, the child computes
12 s then writes (exit 0); `hang`, the child first reads its standard input, a pipe the program never writes: the loop
-> the executor thread -> the child -> its stdin -> main, a cycle."""

import asyncio
import subprocess
import sys

arg = sys.argv[1]
code = (
    "import sys\nsys.stdin.readline()\n"
    if arg == "hang"
    else f"import time\nt = time.time()\nwhile time.time() - t < {arg}: sum(range(9999))\n"
) + "print('ok', flush=True)\n"


async def main() -> None:
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for step in range(3):
        print(f"step {step}", flush=True)
        await asyncio.sleep(0.3)
    line = await asyncio.get_running_loop().run_in_executor(None, child.stdout.readline)
    print(line.decode().strip(), flush=True)
    child.stdin.close()
    child.wait()


# named where the loop's own stack is: a suspended coroutine is on no stack
asyncio.run(main())  # HANG-HERE
print("done", flush=True)
