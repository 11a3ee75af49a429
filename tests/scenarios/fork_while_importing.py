"""fork() while another thread is importing a module: the child, left with the forking thread alone, imports that
module and waits for ever on its import lock, owned by a thread it does not have. `python fork_while_importing.py
hang`; `... twin`: the import ends before the fork, and the child imports it at once."""

import os
import sys
import tempfile
import threading
import time

where = tempfile.mkdtemp()
sys.path.insert(0, where)
with open(os.path.join(where, "heavy_plugin.py"), "w") as f:
    f.write("import time\ntime.sleep(3)\nVALUE = 1\n")  # a slow import (a big library's)
loader = threading.Thread(target=lambda: __import__("heavy_plugin"))
loader.start()
if sys.argv[1] != "hang":
    loader.join()
time.sleep(0.5)
pid = os.fork()
if pid == 0:
    import heavy_plugin  # HANG-HERE

    os._exit(0 if heavy_plugin.VALUE == 1 else 1)
loader.join()
os.waitpid(pid, 0)
print("done", flush=True)
