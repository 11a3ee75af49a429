"""The second run of a data-prep step unzips its archive over files that already exist: unzip asks "replace ...?" on its inherited stdin, and the job waits for it for ever.

report: https://github.com/nco/pynco/pull/65 (nco/pynco#65, "Use stdin=DEVNULL when running subprocesses"; fixes nco/pynco#56)
saw: "Some nco tools would prompt for user input. This could happen if the output file already existed and --overwrite
  was not passed ... no input on stdin could ever be provided ... This caused pynco to freeze waiting for input, with
  no feedback to the user or calling process."
mechanism: subprocess.run() without stdin= hands the child the job's own stdin (here a pipe its launcher holds and never
  writes, as under a scheduler or CI runner). The first run extracts the archive; a rerun finds the files present, and
  unzip (without -o) prints "replace data/train.jsonl? [y]es, [n]o, [A]ll, [N]one, [r]ename:" and blocks in read() on
  that stdin. Its output is captured, so nothing shows; the parent waits in subprocess.run().
diagnosis: hung, process.waits_for_input: unzip (child of the job) blocks reading its stdin, inherited from the job, for
  an answer to its overwrite prompt; the main thread waits for it in subprocess.run() at native_child_prompt_on_job_stdin.py:34 (extract(),
  called at native_child_prompt_on_job_stdin.py:44 for the rerun).
expect: hung process.waits_for_input
stdin: pipe
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
