"""A download that trickles one byte every few seconds: each read is within its timeout, the whole never ends.

report: https://github.com/kserve/kserve/issues/5611
also: https://github.com/PaddlePaddle/GraphNet/pull/718
saw: snapshot_download stalled mid-transfer and hung (13 hours for merges.txt in GraphNet); HF_HUB_DOWNLOAD_TIMEOUT only bounds single reads.
mechanism: a per-read timeout never trips on a connection that delivers a byte now and then, and there is no overall deadline.
expect: hung io.network_wait
"""
import urllib.request

from _zoo import ready, trickle_server

if __name__ == "__main__":
    port = trickle_server(total=100_000_000, chunk=1, every_s=4.0)
    print("downloading merges.txt", flush=True)
    ready()
    urllib.request.urlopen(f"http://127.0.0.1:{port}/merges.txt", timeout=10).read()  # HANG-HERE
