"""The job progresses but its log looks frozen: stdout is block-buffered into a file."""

from __future__ import annotations

from hangwatch.causes import Cause
from hangwatch.diagnose.scene import Hit, Scene, named_at
from hangwatch.diagnose.state import computes
from hangwatch.diagnose.views import ProcessView, describe
from hangwatch.fixes import BUFFERED_FIX
from hangwatch.records.evidence import Role


def _unbuffered(cmdline: tuple[str, ...], env: dict[str, str]) -> bool:
    if env.get("PYTHONUNBUFFERED"):
        return True
    interp_flags = []
    for a in cmdline[1:]:
        if not a.startswith("-") or a in ("-m", "-c"):
            break
        interp_flags.append(a)
    return any(a == "-u" or (a.startswith("-") and not a.startswith("--") and "u" in a[1:]) for a in interp_flags)


def buffered_stdout(v: ProcessView) -> bool:
    """A Python main process or rank whose stdout is a file that did not grow, without -u or
    PYTHONUNBUFFERED: its prints sit in an 8 KiB buffer."""
    return (
        v.role in (Role.MAIN, Role.RANK)
        and v.info.is_python
        and v.info.stdout_is_file
        and not _unbuffered(v.info.cmdline, dict(v.info.env))
        and v.stdout_grew is False
    )


def output_buffered_rule(scene: Scene) -> list[Hit]:
    """output.buffered: the job works but its stdout is a block-buffered file."""
    hits = []
    for v in scene.views:
        if not buffered_stdout(v):
            continue
        t = v.main_thread
        if t is None or not t.has_stack:
            continue
        # The state module says whether main computes (a process whose bytes move while main waits is named by
        # what it waits on); a loop at one function whose locals advance is code.computing's to name.
        computing = computes(v)
        if computing is None or t.spinning:
            continue
        frame = t.user_frame
        size = v.ev.samples[-1].stdout_size
        said = (
            f"{v.label()} is working but its output is block-buffered into {v.info.stdout}, so the log "
            "looks frozen: prints arrive in 8 KiB chunks, or only at exit."
        )
        facts = (
            f"stdout is a file ({v.info.stdout}, {size} bytes), not a terminal; PYTHONUNBUFFERED unset and no -u flag",
            f"the file did not grow in {v.duration_s:.0f} s",
            f"{computing} (now in {describe(frame)})",
        )
        hits.append(named_at(v, t, frame, Cause.OUTPUT_BUFFERED, 0.75, said, facts, BUFFERED_FIX))
    return hits
