"""A consumer process started with spawn gets from a queue made at the module's top level: its own copy, which no
process ever puts to, while the producer fills the parent's.

report: https://github.com/CodeMouse92/DeadSimplePython/issues/6
saw: "the consumer processes and the producer process have different in_queue objects": the program never completes.
mechanism: under spawn the child imports the main module again (as __mp_main__), so a module-level
multiprocessing.Queue() is a new queue there; the consumer's get() reads a pipe whose only write end it holds itself,
and the parent joins the consumer for ever.
expect: hung process.waits_on
accept: child.wait, code.deadlock
"""
import multiprocessing as mp

from _zoo import ready

in_queue = mp.get_context("spawn").Queue()  # made again in every spawned process


def consumer():
    while True:
        item = in_queue.get()  # HANG-HERE
        if item is None:
            break


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    worker = ctx.Process(target=consumer, name="consumer")
    worker.start()
    for n in range(10):
        in_queue.put(n)
    in_queue.put(None)
    ready()
    worker.join()
    print("done", flush=True)
