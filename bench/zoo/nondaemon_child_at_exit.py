"""A tracker's service child never exits: the finished job hangs at exit.

report: https://github.com/wandb/wandb/issues/5601
also: https://github.com/wandb/wandb/issues/919
saw: "Some percentage of the time my jobs hang at the wandb.finish() line"; a Slurm job never exits after "Program ended successfully".
mechanism: at exit, multiprocessing joins its non-daemon children with no deadline; the service child never ends.
expect: hung child.wait
"""
import multiprocessing as mp
import time

from _zoo import ready


def service():
    time.sleep(10**9)  # HANG-HERE


if __name__ == "__main__":
    mp.get_context("fork").Process(target=service, name="wandb-service").start()
    for step in range(3):
        print(f"step {step}", flush=True)
    print("Program ended successfully", flush=True)
    ready()
