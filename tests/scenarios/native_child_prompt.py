"""A data-prep step reruns a native tool that asks before it overwrites (unzip's "replace ...?", here sh's `read`):
started without stdin=, it reads the job's own standard input, and its question goes to the captured output
(nco/pynco#65). `python native_child_prompt.py` hangs there; with `answer`, the tool's input is a pipe that a
thread of the job answers 12 s later (after checking the files already on disk): the healthy twin."""

import subprocess
import sys
import threading
import time

ASK = "printf 'replace data/train.jsonl? [y]es, [n]o, [A]ll: '; read answer; echo \"answered $answer\""


def answer_later(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 12  # checksums of the files already there, asleep in pieces
    while time.monotonic() < deadline:
        time.sleep(0.5)
    proc.stdin.write(b"A\n")
    proc.stdin.close()


print("first run: extracted 2 files", flush=True)
print("rerun (the job was restarted after a preemption)", flush=True)
if sys.argv[1:] == ["answer"]:
    proc = subprocess.Popen(["sh", "-c", ASK], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    threading.Thread(target=answer_later, args=(proc,), name="verify").start()
    out = proc.stdout.read()  # communicate() would close its input first: # ANSWER-HERE
    proc.wait()
else:
    out = subprocess.run(["sh", "-c", ASK], capture_output=True).stdout  # HANG-HERE
print(f"second run: {out.decode().strip()!r}", flush=True)
