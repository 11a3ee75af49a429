"""Reading a native helper's output that comes only after it has waited a while: the read ends when it ends.

report: https://github.com/awestruct/awestruct/pull/136
saw: with stdin closed first, the helper's output arrives and the read returns.
mechanism: healthy: the parent closed the helper's stdin and reads its stdout; the helper (sh) sleeps a bounded time before it sorts and prints.
expect: healthy
"""
import subprocess

from _zoo import ready, seconds

if __name__ == "__main__":
    words = b"\n".join(b"token%d" % (i * 7919 % 5000) for i in range(5000))
    p = subprocess.Popen(["sh", "-c", f"sleep {seconds(20):.0f}; sort -u"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    p.stdin.write(words + b"\n")
    p.stdin.close()
    ready()
    vocab = p.stdout.read()
    p.wait()
    print(len(vocab.splitlines()), "tokens", flush=True)
