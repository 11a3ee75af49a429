"""A tokenizer trained in a child process at full CPU, silent for a long while; the job waits for it.

report: https://github.com/huggingface/tokenizers/issues/814
also: https://github.com/huggingface/tokenizers/issues/86
saw: "Tokenizer training sticks for long times ... the process keeps running"; the progress bar froze on "Count pairs".
mechanism: healthy: the child counts pairs in one function at 100 % CPU, its locals walking the corpus, and prints nothing until it is done; the parent waits in waitpid.
expect: healthy
"""
import os
import time

from _zoo import ready, seconds


def count_pairs(words, deadline):
    pairs = {}
    i = 0
    while time.monotonic() < deadline:
        w = words[i % len(words)]
        pairs[w[:2]] = pairs.get(w[:2], 0) + 1
        i += 1
    return len(pairs)


if __name__ == "__main__":
    words = [f"w{n:06d}" for n in range(100_000)]
    pid = os.fork()
    if pid == 0:
        count_pairs(words, time.monotonic() + seconds(30))
        os._exit(0)
    print("Count pairs", flush=True)
    ready()
    _, status = os.waitpid(pid, 0)
    print("trained", status, flush=True)
