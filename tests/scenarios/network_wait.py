"""Downloading a shard from a server that accepted the connection and never answers."""

import socket
import urllib.request

from _ready import ready


def fetch_shard(url):
    ready()
    with urllib.request.urlopen(url) as r:  # HANG-HERE
        return r.read()


if __name__ == "__main__":
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)  # the kernel completes the handshake; nobody ever reads or answers
    fetch_shard(f"http://127.0.0.1:{server.getsockname()[1]}/shard-00017.tar")
