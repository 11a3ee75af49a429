"""One rank skips a barrier inside an `if` right before the barrier every rank calls: the next call hangs.

report: https://github.com/huggingface/diffusers/issues/2606
also: https://github.com/huggingface/transformers/pull/1081
saw: save_state() hung: it was called under is_main_process, and the checkpoint code inside it calls dist.barrier, which the other ranks never reached.
mechanism: torch pairs collectives by sequence number: the last rank's barrier completes the others' first one, then the others' second barrier meets its next all_reduce. run (the recorder) names the barrier it skipped; inspect sees only where the ranks wait.
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks

WORLD = 4


def main(rank):
    t = torch.ones(4)
    last = rank == WORLD - 1
    for step in range(4):
        dist.all_reduce(t)  # HANG-HERE(inspect)
        if step == 2:
            ready()
            if not last:  # a save only some ranks take part in
                dist.barrier()  # HANG-HERE(run)
            dist.barrier()


if __name__ == "__main__":
    two_ranks(main, world=WORLD)
