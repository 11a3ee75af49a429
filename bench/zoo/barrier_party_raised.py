"""Three loader threads meet at a threading.Barrier each epoch; one raised before it got there: the others wait forever.

report: https://github.com/h2oai/datatable/pull/2521
saw: "some of the threads arrive at a barrier, while some other thread throws an exception ... the threads at a barrier will be left waiting forever".
mechanism: Barrier.wait() with no timeout counts arrivals; the thread that raised never arrives and nothing aborts the barrier; main joins the two that wait.
expect: hung code.deadlock
accept: process.waits_on
"""
import threading

from _zoo import ready

barrier = threading.Barrier(3)


def shard(i):
    if i == 2:
        raise ValueError("shard 2: corrupt record")  # never reaches the barrier
    barrier.wait()  # HANG-HERE


if __name__ == "__main__":
    threads = [threading.Thread(target=shard, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    ready()
    for t in threads:
        t.join()
    print("epoch done", flush=True)
