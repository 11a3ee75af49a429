"""Exec shim for jobs: ask the kernel to SIGTERM the job if hangwatch dies, then exec the command.

    python -m hangwatch._exec CMD [ARGS...]

PR_SET_PDEATHSIG survives exec, so the job itself (not this shim) receives the signal; the job
never runs unseen after its supervisor is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main() -> None:
    argv = sys.argv[1:]
    parent = int(os.environ.pop("HANGWATCH_SUPERVISOR_PID", "0") or 0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the supervisor still ends the job on its own exit paths
    if parent and os.getppid() != parent:
        sys.exit(143)  # the supervisor died before the signal was armed
    try:
        os.execvp(argv[0], argv)  # noqa: S606 - exec the user's own command, as given, by design
    except OSError as e:
        sys.stderr.write(f"hangwatch: cannot run {argv[0]}: {e.strerror}. Check the command and its PATH.\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
