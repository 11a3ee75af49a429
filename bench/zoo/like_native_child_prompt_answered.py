"""Look-alike of native_child_prompt_on_job_stdin: unzip's overwrite prompt reads a pipe the job itself holds, and the job answers "A" after ~15 s of checksum verification.

report: https://github.com/nco/pynco/pull/65 (nco/pynco#65: the child's stdin is no longer the job's own)
mechanism: the rerun gives unzip stdin=PIPE. A helper thread first verifies the existing files against the manifest
  (~15 s, asleep in pieces, no output), then answers the prompt with "A" (replace all) and closes the pipe. Meanwhile
  unzip blocks reading that pipe and the main thread waits for unzip; then unzip replaces the files and exits 0.
diagnosis: healthy: a child waits for input on a pipe that a live thread of its parent writes later.
expect: healthy
stdin: tty
"""
import os
import subprocess
import tempfile
import threading
import time
import zipfile

from _zoo import ready, seconds


def make_archive(root):
    archive = os.path.join(root, "corpus.zip")
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data/train.jsonl", "\n".join(f'{{"text": "example {i}"}}' for i in range(1000)))
        z.writestr("data/valid.jsonl", "\n".join(f'{{"text": "held out {i}"}}' for i in range(100)))
    return archive


def answer_after_verifying(proc):
    deadline = time.monotonic() + seconds(15)  # checksum the files already on disk
    while time.monotonic() < deadline:
        time.sleep(0.5)
    proc.stdin.write(b"A\n")  # replace all
    proc.stdin.close()


if __name__ == "__main__":
    root = tempfile.mkdtemp(prefix="zoo-prep-like-")
    archive, out = make_archive(root), os.path.join(root, "corpus")
    first = subprocess.run(["unzip", archive, "-d", out], capture_output=True, stdin=subprocess.DEVNULL)
    print(f"first run: unzip exited {first.returncode}", flush=True)
    print("rerun (the job was restarted after a preemption)", flush=True)
    proc = subprocess.Popen(["unzip", archive, "-d", out], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    threading.Thread(target=answer_after_verifying, args=(proc,), name="verify").start()
    ready()
    rc = proc.wait()  # ~15 s: unzip waits for the answer
    print(f"second run: unzip exited {rc}", flush=True)
    assert rc == 0
