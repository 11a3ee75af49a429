"""A thread of the job imports a module whose top level takes long (a sleep here: a download, a build) when main forks a
child that imports it too: the child's copy of the module's import lock is held by a thread it does not have, for
ever, while main waits for the child. The importing thread is in a timed wait and comes back by itself, but it runs the
module, not a function of the job's that may end the child: the child's proof is the job's. `python
fork_while_a_thread_imports.py` (the module is written to the working directory)."""

import os
import sys
import threading
import time

with open("slow_module.py", "w") as f:
    f.write("import time\n\ntime.sleep(60)\n")
sys.path.insert(0, os.getcwd())


def load() -> None:
    import slow_module  # noqa: F401


threading.Thread(target=load, daemon=True).start()
time.sleep(0.5)
pid = os.fork()
if pid == 0:
    import slow_module  # noqa: F401  # HANG-HERE

    os._exit(0)
os.waitpid(pid, 0)
print("done", flush=True)
