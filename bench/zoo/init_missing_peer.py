"""init_process_group for world_size=2 with only rank 0 ever started: it waits at setup.

report: https://github.com/pytorch/pytorch/issues/49846
saw: init_process_group('nccl', init_method='tcp://localhost:9129', rank=0, world_size=2) in Jupyter always hung; mrshenli asked whether any process had rank=1.
mechanism: the rendezvous waits for a rank that was never started (gloo's default timeout: 30 min).
expect: waiting distributed.rendezvous_wait
"""
import torch.distributed as dist
from _zoo import free_port, ready

if __name__ == "__main__":
    port = free_port()
    print(f"joining tcp://127.0.0.1:{port} as rank 0 of 2", flush=True)
    ready()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=2)  # HANG-HERE
