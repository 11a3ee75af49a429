"""Healthy: main started a helper that streams a file slowly (reads and writes a little, often) and keeps the process
alive in `while True: time.sleep(0.5)` while it runs."""

import subprocess
import sys
import time

CHILD = (
    "import os, time\nwith open(os.devnull, 'wb') as out, open('/dev/zero', 'rb') as src:\n"
    "    while True:\n        out.write(src.read(4096))\n        time.sleep(0.05)\n"
)
helper = subprocess.Popen([sys.executable, "-c", CHILD])
while True:  # KEEPS-ALIVE
    time.sleep(0.5)
