"""A child process was to set a multiprocessing Event once its shard is ready, but it returns early on an error
first; the main process then waits for the event forever: an event does not learn that its setter has exited."""

import multiprocessing as mp
import time

from _ready import ready


def prepare_shard(ready_event):
    shard = None
    if shard is None:
        return  # an early return: the event is never set
    ready_event.set()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    shard_ready = ctx.Event()
    for step in range(30):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    helper = ctx.Process(target=prepare_shard, args=(shard_ready,))
    helper.start()
    helper.join()
    ready()
    shard_ready.wait()  # HANG-HERE
    print("shard ready", flush=True)
