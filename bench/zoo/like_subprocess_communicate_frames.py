"""A trainer feeds frames to a slow encoder with communicate(), which reads its stderr as it writes.

report: https://github.com/ansible/ansible/pull/3991
saw: the fix for the stdin/stderr deadlock: communicate() writes the input and drains the output pipes together.
mechanism: healthy: the encoder is slow and logs a lot; communicate() keeps both pipes moving until the encoder ends.
expect: healthy
"""
import subprocess
import sys

from _zoo import ready, seconds

ENCODER = """import sys, time
for chunk in iter(lambda: sys.stdin.buffer.read(4096), b""):
    sys.stderr.write(f"encoded a frame chunk of {len(chunk)} bytes\\n" * 20)
    time.sleep(float(sys.argv[1]))
"""

if __name__ == "__main__":
    frames = b"\0" * (4 << 20)
    p = subprocess.Popen([sys.executable, "-c", ENCODER, str(seconds(20) / 1024)], stdin=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    ready()
    _, err = p.communicate(frames)
    print(f"encoded; {len(err)} bytes of log", flush=True)
