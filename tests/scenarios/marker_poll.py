"""The job waits for a marker file its child should write, logging the same line each second. `python marker_poll.py
WHEN`: `never`, the child fails before it writes it (the job polls for ever); `12`, the child computes 12 s, then
writes it, and the job goes on."""

import logging
import os
import subprocess
import sys
import tempfile
import time

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
marker = os.path.join(tempfile.mkdtemp(), "ready")
if sys.argv[1] == "never":
    child = "raise SystemExit('prep failed')"
else:
    child = f"import time\nt = time.time()\nwhile time.time() - t < {sys.argv[1]}: sum(range(9999))\nopen({marker!r}, 'w')"
subprocess.Popen([sys.executable, "-c", child])
while not os.path.exists(marker):  # HANG-HERE
    logging.info("waiting for %s", marker)
    time.sleep(1)
print("done", flush=True)
