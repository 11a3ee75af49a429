"""Two processes take the same two multiprocessing locks in opposite orders: each holds one and waits for the other.

report: https://github.com/stripe-archive/sequins/pull/90
also: https://github.com/mike-marcacci/node-redlock/issues/305
saw: "thread-1: acquire w.lock; thread-2: acquire w.hooksLock; thread-1: acquire w.hooksLock (blocks on thread-2);
thread-2: acquire w.lock (blocks on thread-1) <deadlock>".
mechanism: the same lock-order inversion across two processes: the trainer takes the checkpoint lock then the
index lock, its exporter the index lock then the checkpoint lock; multiprocessing locks are shared semaphores, so
each acquire() waits with no timeout on a semaphore only the other process could post.
expect: hung io.lock_wait
accept: code.deadlock, process.waits_on, child.wait
"""
import multiprocessing as mp

from _zoo import ready


def exporter(ckpt, index, both_hold_one):
    with index:
        both_hold_one.wait()
        with ckpt:  # the other order
            print("exported", flush=True)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    ckpt, index, both_hold_one = ctx.Lock(), ctx.Lock(), ctx.Barrier(2)
    ctx.Process(target=exporter, args=(ckpt, index, both_hold_one), name="exporter").start()
    with ckpt:
        both_hold_one.wait()
        ready()
        with index:  # HANG-HERE
            print("saved", flush=True)
