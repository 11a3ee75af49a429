"""A download with no progress bar that moves slowly but steadily, then finishes.

report: https://github.com/huggingface/datasets/issues/2035
also: https://github.com/unslothai/unsloth/issues/9018
saw: wiki40b "freezes"; the maintainer: 631 MiB with no progress bar take minutes, "monitor with nload".
mechanism: healthy: bytes arrive all the time, 64 KiB at a time; nothing is printed until the file is complete.
expect: healthy
"""
import os
import shutil
import tempfile
import urllib.request

from _zoo import ready, seconds, trickle_server

if __name__ == "__main__":
    port = trickle_server(total=4 << 20, chunk=64 << 10, every_s=seconds(30) / 64)
    path = os.path.join(tempfile.gettempdir(), f"zoo-dl-{os.getpid()}.bin")
    print("downloading wiki40b", flush=True)
    ready()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/wiki40b.tar", timeout=30) as r, open(path, "wb") as f:
        shutil.copyfileobj(r, f)
    print(f"downloaded {os.path.getsize(path)} bytes", flush=True)
    os.unlink(path)
