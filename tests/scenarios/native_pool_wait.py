"""The main thread waits on an Event or a Future that another thread of the process completes.

`python native_pool_wait.py event SECONDS` / `future SECONDS`: that thread encodes text with tokenizers for SECONDS, in
batches of a few seconds each; in each batch tokenizers parks it in a futex with no timeout while rayon's native
threads do the work (no Python stack, at CPU), then it sets the Event (or its Future completes): prints `done`.
`python native_pool_wait.py nested`: a task of a one-worker ThreadPoolExecutor submits to that same executor and
waits for the result; the task it waits for can only run on the worker that waits (cpython#141617): nothing can
complete either Future.
"""

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

MODE = sys.argv[1]


def encode(seconds: float) -> int:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {f"w{i}": i for i in range(1000)}
    vocab["[UNK]"] = 1000
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))  # noqa: S106 - a vocabulary entry
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    line = " ".join(f"w{i % 1000}" for i in range(200))
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += len(tok.encode_batch([line] * 30000))  # a few seconds, its caller parked while rayon works
    return n


if MODE == "nested":
    executor = ThreadPoolExecutor(max_workers=1)

    def prepare(i: int) -> int:
        shard = executor.submit(sum, range(i))
        return shard.result()  # HANG-HERE

    print("preparing", flush=True)
    print(executor.submit(prepare, 3).result(), flush=True)
elif MODE == "event":
    print("encoding", flush=True)
    done, got = threading.Event(), []
    threading.Thread(target=lambda: (got.append(encode(float(sys.argv[2]))), done.set()), name="encoder").start()
    done.wait()
    print("done", got, flush=True)
else:
    print("encoding", flush=True)
    with ThreadPoolExecutor(1) as ex:
        n = ex.submit(encode, float(sys.argv[2])).result()
    print("done", n, flush=True)
