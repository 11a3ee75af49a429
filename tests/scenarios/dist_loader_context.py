"""Two ranks under torchrun each build a DataLoader with workers and say which start method it got."""

import torch.distributed as dist
from torch.utils.data import DataLoader

if __name__ == "__main__":
    dist.init_process_group("gloo")
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=1)
    ctx = type(loader.multiprocessing_context).__name__ if loader.multiprocessing_context else "default"
    print(f"rank {dist.get_rank()} context {ctx} batches {len(list(loader))}", flush=True)
    dist.destroy_process_group()
