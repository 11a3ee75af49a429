"""Exec shim for jobs: ask the kernel to SIGTERM the job if hangwatch dies, then exec the command.

    python -m hangwatch._exec CMD [ARGS...]

PR_SET_PDEATHSIG survives exec, so the job itself (not this shim) receives the signal; the job
never runs unseen after its supervisor is gone.
"""

from __future__ import annotations

import os
import sys

PR_SET_PDEATHSIG = 1
SIGTERM = 15  # Linux's number; prctl is Linux only


def _arm_death_signal() -> None:
    """prctl(PR_SET_PDEATHSIG, SIGTERM) through _ctypes, the C half of ctypes: importing ctypes itself
    costs about as much as this whole interpreter's start, and every job start waits for it."""
    import _ctypes

    class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int
        _type_ = "i"

    class _Func(_ctypes.CFuncPtr):  # a cdecl function returning int, as ctypes.CDLL makes them
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = _Int

    class _Libc:
        _handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]  # None: the program itself

    _Func(("prctl", _Libc))(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0)  # type: ignore[arg-type]  # a CDLL's shape


def main() -> None:
    argv = sys.argv[1:]
    parent = int(os.environ.get("HANGWATCH_SUPERVISOR_PID", "0") or 0)  # kept: it names the supervisor to `inspect`
    try:
        _arm_death_signal()
    except (ImportError, OSError, AttributeError, TypeError):
        try:  # the same through ctypes itself (a Python whose _ctypes differs)
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # not Linux: the supervisor and the guardian still end the job
    if parent and os.getppid() != parent:
        sys.exit(143)  # the supervisor died before the signal was armed
    try:
        os.execvp(argv[0], argv)  # noqa: S606 - exec the user's own command, as given, by design
    except OSError as e:
        sys.stderr.write(f"hangwatch: cannot run {argv[0]}: {e.strerror}. Check the command and its PATH.\n")
        sys.exit(127)


if __name__ == "__main__":
    main()
