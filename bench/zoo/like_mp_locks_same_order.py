"""The same two multiprocessing locks, taken in one order by both processes: the exporter waits while the trainer
holds both for a long save.

report: https://github.com/stripe-archive/sequins/pull/90
saw: taking the locks in one order ("acquire the former first") ends the deadlock; a wait on a lock whose holder
works is no hang.
mechanism: healthy: the trainer holds both locks while it saves (asleep in pieces, as a slow write would be); the
exporter waits on the first lock, then takes both.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def exporter(ckpt, index, started):
    started.wait()
    with ckpt, index:
        print("exported", flush=True)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    ckpt, index, started = ctx.Lock(), ctx.Lock(), ctx.Event()
    p = ctx.Process(target=exporter, args=(ckpt, index, started), name="exporter")
    p.start()
    with ckpt, index:
        started.set()
        ready()
        end = time.monotonic() + seconds(40)
        while time.monotonic() < end:  # the save
            time.sleep(0.5)
    p.join()
    print("saved", flush=True)
