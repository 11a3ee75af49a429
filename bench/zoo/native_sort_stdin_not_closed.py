"""Sorting a vocabulary with sort(1) through pipes, without closing its stdin: the read of its output never ends.

report: https://github.com/awestruct/awestruct/pull/136
also: https://github.com/paramiko/paramiko/pull/43
saw: a popen3 hang: "the pipe requires stdin's EOF to yield output, so better close it before asking for output".
mechanism: sort prints nothing before end of file on its stdin; the parent holds that pipe's write end open and reads sort's stdout: each waits for the other.
expect: hung process.waits_on
accept: child.wait
"""
import subprocess

from _zoo import ready

if __name__ == "__main__":
    words = b"\n".join(b"token%d" % (i * 7919 % 5000) for i in range(5000))
    p = subprocess.Popen(["sort", "-u"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(words + b"\n")
    p.stdin.flush()
    ready()
    vocab = p.stdout.read()  # HANG-HERE
    print(len(vocab.splitlines()), "tokens", flush=True)
