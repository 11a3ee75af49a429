"""A helper started inline with `python -c` whose sleep loop is bounded: the job waits, then goes on.

report: https://github.com/rwth-i6/returnn/issues/1497
saw: the parent sits in os.waitpid while its helper runs; it returns when the helper's loop ends.
mechanism: healthy: `python -c "for _ in range(N): time.sleep(1)"` ends after N s; the loop has a way out.
expect: healthy
"""
import subprocess
import sys

from _zoo import ready, seconds

if __name__ == "__main__":
    ready()
    subprocess.run([sys.executable, "-c", f"import time\nfor _ in range({seconds(20):.0f}): time.sleep(1)"])
    print("helper ended", flush=True)
