"""The second run of a data-prep step unzips its archive over files that already exist: unzip asks "replace ...?" on its inherited stdin, and the job waits for it for ever.

report: https://github.com/nco/pynco/pull/65 (nco/pynco#65, "Use stdin=DEVNULL when running subprocesses"; fixes nco/pynco#56)
saw: "Some nco tools would prompt for user input. This could happen if the output file already existed and --overwrite
  was not passed ... no input on stdin could ever be provided ... This caused pynco to freeze waiting for input, with
  no feedback to the user or calling process."
mechanism: subprocess.run() without stdin= hands the child the job's own stdin (here the terminal the job was started
  on, which nobody watches). The first run extracts the archive; a rerun finds the files present, and unzip (without
  -o) prints "replace data/train.jsonl? [y]es, [n]o, [A]ll, [N]one, [r]ename:" to its captured stdout and blocks in
  read() on that terminal. Nothing shows; the parent waits in subprocess.run().
diagnosis: hung, process.waits_for_input: unzip (child of the job, no Python stack) blocks reading the job's terminal
  for an answer to its overwrite question; the main thread waits for it in subprocess.run() at
  native_child_prompt_on_job_stdin.py:35 (extract(), called at native_child_prompt_on_job_stdin.py:45 for the rerun).
  On a pipe a launcher holds (a CI runner), the pipe's holder decides, as for any read of a pipe: not named a prompt.
expect: hung process.waits_for_input
stdin: tty
"""
import os
import subprocess
import tempfile
import zipfile

from _zoo import ready


def make_archive(root):
    archive = os.path.join(root, "corpus.zip")
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data/train.jsonl", "\n".join(f'{{"text": "example {i}"}}' for i in range(1000)))
        z.writestr("data/valid.jsonl", "\n".join(f'{{"text": "held out {i}"}}' for i in range(100)))
    return archive


def extract(archive, out):
    return subprocess.run(["unzip", archive, "-d", out], capture_output=True, text=True)  # HANG-HERE


if __name__ == "__main__":
    root = tempfile.mkdtemp(prefix="zoo-prep-")
    archive, out = make_archive(root), os.path.join(root, "corpus")
    first = extract(archive, out)
    print(f"first run: unzip exited {first.returncode}, {len(os.listdir(os.path.join(out, 'data')))} files", flush=True)
    print("rerun (the job was restarted after a preemption)", flush=True)
    ready()
    second = extract(archive, out)
    print(f"second run: unzip exited {second.returncode}", flush=True)
