"""The job runs a preprocessing step as a subprocess, and that step is stuck."""

import subprocess
import sys

CHILD = """
import threading, sys
sys.path.insert(0, sys.argv[1])
from _ready import ready
def tokenize_corpus():
    ready()
    threading.Event().wait()  # HANG-HERE:child
tokenize_corpus()
"""

if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(os.environ["HW_TMP"], "preprocess.py"), "w") as f:
        f.write(CHILD)
    subprocess.run([sys.executable, f.name, here], check=True)  # HANG-HERE:parent
