"""Tell people: the same summary through apprise (Slack, Discord, email, ntfy, a JSON webhook, ...).

Sending happens in a background thread with a bounded wait at exit: a slow or unreachable endpoint
never delays supervision.
"""

from __future__ import annotations

import logging
import threading
import time

from hangwatch.errors import UsageError

log = logging.getLogger(__name__)
SEND_TIMEOUT_S = 15.0


class Notifier:
    """Sends incident notifications through apprise, in the background."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self._threads: list[threading.Thread] = []
        self._apprise = None
        if urls:
            import apprise

            self._apprise = apprise.Apprise()
            for u in urls:
                if not self._apprise.add(u):
                    shown = u.split("://", 1)[0] + "://..." if "://" in u else "that value"
                    raise UsageError(
                        f"--notify {shown} is not a notification URL apprise understands",
                        "Use a URL such as json://host/path, slack://..., ntfys://topic",
                    )

    def send(self, title: str, body: str) -> None:
        """Send one notification without waiting for it."""
        if self._apprise is None:
            return
        target = self._apprise

        def _send() -> None:
            try:
                if not target.notify(title=title, body=body):
                    log.warning("a notification could not be delivered")
            except Exception:  # a notifier must never take the supervisor down
                log.exception("notification failed")

        t = threading.Thread(target=_send, name="hangwatch-notify", daemon=True)
        t.start()
        self._threads.append(t)

    def flush(self, timeout_s: float = SEND_TIMEOUT_S) -> None:
        """Wait for pending notifications, ``timeout_s`` in all."""
        deadline = time.monotonic() + timeout_s
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self._threads = [t for t in self._threads if t.is_alive()]
