"""An HTTP request without a timeout to a server that accepted and never answers.

report: https://github.com/facebookresearch/fairseq/pull/1869
also: https://github.com/psf/requests/issues/3353
saw: "I've seen trainings being frozen in requests.head for ever".
mechanism: requests and urllib default to no timeout; a server that accepted the connection but never answers leaves the client in recv forever.
expect: hung io.network_wait
"""
import urllib.request

from _zoo import black_hole, ready

if __name__ == "__main__":
    port = black_hole()
    print("checking the pretrained weights' URL", flush=True)
    ready()
    urllib.request.urlopen(f"http://127.0.0.1:{port}/checkpoint.pt")  # HANG-HERE
