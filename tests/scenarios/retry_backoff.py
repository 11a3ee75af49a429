"""Healthy enough: the main thread retries a connection that is refused, sleeping between tries
(a retry loop with backoff waits for a service; it is not stuck in one call)."""

import socket
import time

from _ready import ready


def connect_with_retry(port):
    delay = 0.05
    tries = 0
    while True:
        tries += 1
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=1)
        except OSError:
            time.sleep(delay)  # SLEEP-HERE
            delay = min(delay * 2, 0.4)
        if tries == 3:
            ready()


if __name__ == "__main__":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    connect_with_retry(port)
