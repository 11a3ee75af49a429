"""An ffmpeg child stopped (SIGTTIN in a background job): the parent waits for it forever.

report: https://github.com/openai/whisper/pull/178
also: https://github.com/ytdl-org/youtube-dl/pull/10996
saw: "ffmpeg subprocess suspends when executed in the background"; the shell showed "Stopped (tty input)".
mechanism: a background process that reads the terminal is stopped by the kernel (state T); the Python parent waits on it forever. (SIGSTOP stands in for SIGTTIN, which the kernel drops for orphaned process groups.)
expect: stopped process.stopped
accept: child.wait
"""
import os
import signal
import subprocess
import sys
import time

from _zoo import ready

if __name__ == "__main__":
    ffmpeg = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10**9)"])
    time.sleep(0.5)
    os.kill(ffmpeg.pid, signal.SIGSTOP)
    print("decoding audio", flush=True)
    ready()
    ffmpeg.wait()
