"""fork() while another thread is importing a module: the child, left with the forking thread alone, imports that
module and waits for ever on its import lock, owned by a thread it does not have. `python fork_while_importing.py
hang`; `... twin`: the import ends before the fork, and the child imports it at once."""

import os
import sys
import tempfile
import threading
import time

where = tempfile.mkdtemp(prefix="hw-plugins-", dir=os.environ.get("HW_TMP", "."))  # (the test run's folder)
sys.path.insert(0, where)
begun = os.path.join(where, "begun")
with open(os.path.join(where, "heavy_plugin.py"), "w") as f:  # a slow import (a big library's); says it has begun
    f.write(f"import time\nopen({begun!r}, 'w').close()\ntime.sleep(3)\nVALUE = 1\n")
loader = threading.Thread(target=lambda: __import__("heavy_plugin"))
loader.start()
deadline = time.monotonic() + 10
while not os.path.exists(begun) and time.monotonic() < deadline:  # the loader holds the module's lock now
    time.sleep(0.01)
if sys.argv[1] != "hang":
    loader.join()
pid = os.fork()
if pid == 0:
    import heavy_plugin  # HANG-HERE

    os._exit(0 if heavy_plugin.VALUE == 1 else 1)
loader.join()
os.waitpid(pid, 0)
print("done", flush=True)
