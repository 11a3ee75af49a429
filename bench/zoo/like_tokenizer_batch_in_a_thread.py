"""Tokenizing a large dataset on a background thread while the main thread waits for it: every Python thread is
parked in a futex with no timeout, the work is done by the tokenizer's native threads.

report: https://github.com/Wiselnn570/VideoRoPE/issues/4
saw: "running tokenizer on a large dataset (here, ~1 M) will hang" ("Running tokenizer on dataset sticks for too long"); it was slow, and partitioning the data made it finish
mechanism: healthy: tokenizers' encode_batch parks its calling thread in a futex while rayon's threads (no Python stack) encode at full CPU; the main thread waits on an Event that thread sets when it is done.
expect: healthy
"""
import threading
import time

from _zoo import ready, seconds
from tokenizers import Tokenizer, models, pre_tokenizers

vocab = {f"w{i}": i for i in range(1000)}
vocab["[UNK]"] = 1000
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))  # noqa: S106 - a vocabulary entry
tok.pre_tokenizer = pre_tokenizers.Whitespace()
LINE = " ".join(f"w{i % 1000}" for i in range(200))


def tokenize(out, done):
    end = time.monotonic() + seconds(30)
    while time.monotonic() < end:
        out.append(len(tok.encode_batch([LINE] * 30000)))  # a few seconds, its caller parked
    done.set()


if __name__ == "__main__":
    out, done = [], threading.Event()
    threading.Thread(target=tokenize, args=(out, done), name="tokenize").start()
    ready()
    done.wait()
    print("tokenized", sum(out), flush=True)
