"""A non-daemon monitor thread left running after training fails: the process never exits.

report: https://github.com/lincc-frameworks/hyrax/pull/1011
also: https://github.com/rusty1s/pyg_autoscale/issues/15
saw: after a training exception, a non-daemon GPU monitor thread "blocks the interpreter forever at shutdown".
mechanism: the interpreter joins every non-daemon thread at exit; the monitor polls until a stop event that nobody sets.
expect: hung code.deadlock
accept: code.busy_loop
"""
import threading

from _zoo import ready

stop = threading.Event()


def gpu_monitor():
    while not stop.wait(1.0):  # HANG-HERE
        pass


if __name__ == "__main__":
    threading.Thread(target=gpu_monitor, name="GpuMonitor").start()
    print("epoch 0", flush=True)
    ready()
    raise RuntimeError("training failed")
