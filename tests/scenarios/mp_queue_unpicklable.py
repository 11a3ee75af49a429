"""A multiprocessing.Queue's put() returns at once; its feeder thread pickles the item later, and one that cannot be
pickled is printed and dropped (python/cpython#84376; dmwm/CRABServer#9014): the child that get()s it waits for ever, and the parent joins
the child.

`python mp_queue_unpicklable.py hang`: the item holds a threading.Lock. `... twin`: the same item without it: the child
gets it and the job ends with `done`.
"""

import multiprocessing as mp
import sys
import threading


def consume(q):
    batch = q.get()
    print("got", len(batch["rows"]), flush=True)


if __name__ == "__main__":
    q = mp.get_context("fork").Queue()
    c = mp.get_context("fork").Process(target=consume, args=(q,))
    c.start()
    item = {"rows": [1, 2, 3]}
    if sys.argv[1] == "hang":
        item["lock"] = threading.Lock()  # cannot be pickled: the feeder thread prints the error and drops the item
    q.put(item)
    c.join()  # HANG-HERE
    print("done", flush=True)
