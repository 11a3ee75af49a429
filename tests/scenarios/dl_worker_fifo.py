"""A DataLoader worker reads a shard from a file that never delivers (a named pipe nobody writes:
the stand-in for a stalled network mount)."""

import os

from _ready import ready
from torch.utils.data import DataLoader, Dataset

SHARD = os.path.join(os.environ.get("HW_TMP", "/tmp"), "shard-00017.bin")


class Shards(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        fd = os.open(SHARD, os.O_RDWR)  # O_RDWR: opening does not block, reading does
        ready()
        return os.read(fd, 4096)  # HANG-HERE


if __name__ == "__main__":
    os.mkfifo(SHARD)
    for batch in DataLoader(Shards(), batch_size=1, num_workers=1):
        pass
