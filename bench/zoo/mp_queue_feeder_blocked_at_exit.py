"""A multiprocessing.Queue whose reader process is gone: at exit its feeder thread is joined while it writes into a full pipe.

report: https://github.com/siliconcompiler/siliconcompiler/pull/5246
saw: pytest could not exit: "the feeder blocks writing to a full pipe, and Queue's atexit finalizer joins that thread with no timeout, so the interpreter can never exit".
mechanism: the log listener process ended; records put since then sit in the queue's buffer; its feeder thread blocks writing to the pipe, whose only reader left is this process itself, and the interpreter's exit joins the feeder.
expect: hung process.waits_on
accept: code.deadlock, child.wait
"""
import multiprocessing as mp

from _zoo import ready


def listener(q):
    q.get()  # takes one record, then ends (a crash in the real report)


if __name__ == "__main__":
    q = mp.Queue()
    p = mp.Process(target=listener, args=(q,))
    p.start()
    q.put("first record")
    p.join()
    for i in range(2000):
        q.put(f"log record {i} " + "x" * 200)
    print("done; exiting", flush=True)
    ready()  # main returns; the queue's finalizer joins the feeder thread
