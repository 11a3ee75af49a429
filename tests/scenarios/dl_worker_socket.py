"""A DataLoader worker fetches a shard over TCP from a server that accepted the connection and never
answers; the socket has no timeout."""

import os
import socket

from _ready import ready
from torch.utils.data import DataLoader, Dataset

LISTENER = socket.socket()
LISTENER.bind(("127.0.0.1", 0))
LISTENER.listen(8)  # connections complete in the backlog; nothing ever sends
PORT = LISTENER.getsockname()[1]


class RemoteShards(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        sock = socket.create_connection(("127.0.0.1", PORT))
        ready()
        return sock.recv(1024)  # HANG-HERE


if __name__ == "__main__":
    os.environ["HW_PORT"] = str(PORT)
    for batch in DataLoader(RemoteShards(), batch_size=1, num_workers=1):
        pass
