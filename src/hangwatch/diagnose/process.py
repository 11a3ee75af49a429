"""Process-level causes: a stopped process, a parent waiting on a stuck child."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.chains import STATE_WORDS
from hangwatch.diagnose.holding import deciding_holder, holder_doing, holder_text
from hangwatch.diagnose.own import senders
from hangwatch.diagnose.scene import Hit, Scene, named, named_at
from hangwatch.diagnose.state import holder_state, process_state, thread_state
from hangwatch.diagnose.views import (
    IDLE_CPU_PERCENT,
    ProcessView,
    ThreadView,
    describe,
    described,
    innermost_explaining,
    innermost_user,
    timer_bound,
)
from hangwatch.fixes import (
    CHILD_INPUT_FIX,
    CHILD_OUTPUT_FIX,
    CHILD_STDIN_FIX,
    CHILD_WAIT_FIX,
    DEBUGGER_FIX,
    INPUT_FIX,
    NATIVE_INPUT_FIX,
    QUEUE_PICKLE_FIX,
    SELF_WAIT_FIX,
)
from hangwatch.records.evidence import Frame, LockWait, Role
from hangwatch.records.incident import Finding

DEBUGGER_FILES = ("pdb.py", "cmd.py", "bdb.py")


def stdin_kind(target: str | None) -> str:
    """What a standard input is, in words: a terminal, a pipe, /dev/null, a file, or unknown."""
    if not target:
        return "unknown"
    if target.startswith(sg.TTY_PREFIXES):
        return f"a terminal ({target})"
    if target.startswith("pipe:"):
        return "a pipe"
    if target == "/dev/null":
        return "/dev/null"
    if target.startswith("socket:"):
        return "a socket"
    return f"a file ({target})"


def input_wait_rule(scene: Scene) -> list[Hit]:
    """process.waits_for_input: the job is blocked reading its standard input or the terminal (a login
    prompt, input(), getpass, a forgotten breakpoint()). On a terminal nobody is there to type (the graph's edge to
    a person); at a prompt on a pipe or a socket, their writers decide (the graph follows them) and are named here."""
    hits = []
    bound = timer_bound(scene.evidence)
    for v in scene.views:
        if v.role not in (Role.MAIN, Role.RANK, Role.CHILD):
            continue
        if not v.has_stacks:
            native = _native_input_hit(scene, v)
            hits.extend([native] if native is not None else [])
            continue
        t = v.main_thread  # a side thread reading stdin (press q to quit) does not stop the job
        if (t is not None and t.has_stack and t.idle_throughout and not t.woke_often) and (
            reads_from_person(v, t) or (at_prompt(t) and stdin_wait(v, t) is not None)
        ):
            hits.append(_input_hit(v, t, bound))
    return hits


def native_at_terminal(scene: Scene, v: ProcessView) -> ProcessView | None:
    """For a process with no Python stack (unzip, git, ssh) whose main thread reads the terminal and stays blocked
    there for the whole window (the state module's reading), the process that waits for it: its parent, waiting for
    it as a child, or itself where it is the job's root. It waits for a person. Only where its standard input is the
    job's own terminal: a child under pexpect reads a pty the job drives, its master's to answer; a child nobody
    waits for (a side thread's `rsync` at a host-key question) does not stop the job."""
    t, root = v.main_thread, scene.view(scene.evidence.root_pid)
    if t is None or v.has_stacks or v.info.is_python or root is None:
        return None
    terminal = root.info.stdin or ""
    if not terminal.startswith(sg.TTY_PREFIXES) or v.info.stdin != terminal:
        return None
    if thread_state(v, t).state != "blocked" or not reads_from_person(v, t):
        return None
    if v.pid == root.pid:
        return v
    parent = scene.view(v.info.ppid)
    if parent is None or not waits_for_child(parent):
        return None
    return parent if any(k.pid == v.pid for k in waited_children(scene, parent)) else None


def stdin_wait(v: ProcessView, t: ThreadView) -> LockWait | None:
    """The capture's wait of ``t`` on its standard input when that is a pipe, a FIFO or a socket (read by fd 0 or by
    another fd open on it: /dev/stdin opened again), with the holders of its other end; None when there is none."""
    stdin = v.info.stdin  # (a terminal only where its master is the job's: the pty's wait, capture/pipes.py)
    if not stdin or t.last.syscall not in sg.READ_SYSCALLS:
        return None
    paths = (stdin, sg.PTY_PATH + stdin)
    return next((w for w in v.ev.waits if w.tid == t.tid and w.kind in ("pipe", "socket") and w.path in paths), None)


def at_prompt(t: ThreadView) -> bool:
    """``t`` is at a prompt: input(), getpass, a debugger, or a line of the user's that asks for input."""
    if any(sg.matches_any(f, sg.INPUT_FRAMES) for f in t.frames):
        return True
    user = innermost_user(t.frames)
    return user is not None and bool(sg.INPUT_CALL.search(user.code or ""))


def reads_from_person(v: ProcessView, t: ThreadView) -> bool:
    """``t`` waits for a person at a terminal: it reads one (its standard input, /dev/tty as getpass does, a child
    asking on the terminal), or sits in a prompt's own frames (input()'s readline, pdb, getpass) whose call could not
    be read while its standard input is a terminal. A prompt on a pipe or a socket waits for whoever holds its other
    end (`echo y | python train.py`, a feeder that answers later), which the graph follows; a line that only looks
    like a prompt (`model.prompt(q)`) and waits on something else is no person's."""
    last = t.last
    if any(w.tid == t.tid and (w.path or "").startswith(sg.PTY_PATH) for w in v.ev.waits):
        return False  # a pty whose master a process of the job holds: that process could answer (the graph's hop)
    if last.syscall in sg.READ_SYSCALLS:
        if "ptmx" in (last.fd_target or ""):
            return False  # a pty's master (a container's /dev/pts/ptmx): it reads a child's output, not a person
        return (last.fd_target or "").startswith(sg.TTY_PREFIXES) or (
            last.fd == 0 and (v.info.stdin or "").startswith(sg.TTY_PREFIXES)
        )
    return (
        last.syscall is None
        and (v.info.stdin or "").startswith(sg.TTY_PREFIXES)
        and any(sg.matches_any(f, sg.INPUT_FRAMES) for f in t.frames)
    )


def at_debugger(t: ThreadView) -> bool:
    """``t`` is at a debugger's prompt (pdb, and what builds on it: breakpoint(), torch's distributed one)."""
    prompt_frame = next((f for f in t.frames if sg.matches_any(f, sg.INPUT_FRAMES)), None)
    return prompt_frame is not None and prompt_frame.file.endswith(DEBUGGER_FILES)


def _input_hit(v: ProcessView, t: ThreadView, bound: float) -> Hit:
    debugger = at_debugger(t)
    user = innermost_user(t.frames)
    shown = user or innermost_explaining(t.frames)  # (`python -c`: `<string>`)
    prompt_frame = next((f for f in t.frames if sg.matches_any(f, sg.INPUT_FRAMES)), None)
    tail = [ln.strip() for ln in (v.ev.output_tail or "").replace("\r", "\n").splitlines() if ln.strip()]
    prompt = tail[-1][-160:] if tail else None
    ev = [f"{v.label()} thread '{t.name}' blocked for {v.duration_s:.0f} s at {v.cpu_text()} in {described(shown)}"]
    if t.last.syscall in sg.READ_SYSCALLS and (t.last.fd == 0 or (t.last.fd_target or "").startswith(sg.TTY_PREFIXES)):
        src = "standard input (fd 0)" if t.last.fd == 0 else (t.last.fd_target or "the terminal")
        ev.append(f"blocked in {t.last.syscall}() on {src}")
    if prompt_frame is not None:
        ev.append(f"in {describe(prompt_frame)}")
    ev.append(f"standard input is {stdin_kind(v.info.stdin)}")
    if prompt:
        ev.append(f"the job's last output line: {prompt!r}")
    at = (
        f"stopped at a debugger prompt (a breakpoint() or pdb.set_trace() just before {describe(user)})"
        if debugger
        else f"is at a prompt at {describe(shown)}" + (f" ({prompt!r})" if prompt else "")
    )
    wait = None if reads_from_person(v, t) else stdin_wait(v, t)
    pty = wait is not None and (wait.path or "").startswith(sg.PTY_PATH)
    if wait is None:
        summary = f"{v.label()} {at} and waits for someone to type at the terminal; nobody will, so it never goes on."
    else:  # a pipe or a socket feeds it: its writers decide (the graph's chain), in the words of what each does
        end = "master end" if pty else "write end" if wait.kind == "pipe" else "other end"
        src = (wait.path or "") if pty else f"{stdin_kind(v.info.stdin)} ({wait.path})"
        h = deciding_holder(wait.holders) if wait.holders else None
        ev.extend(f"pid {x.pid} {x.how}: {holder_doing(x, holder_state(x), bound)}" for x in wait.holders[:4])
        summary = f"{v.label()} {at}, and reads its standard input, {src}: " + (
            f"its {end} is held by {holder_text(h)}, which {holder_doing(h, holder_state(h), bound)}; the read ends "
            "when that writes or exits."
            if h is not None
            else f"no other process was found holding its {end} ({wait.note or 'a search of the host'})."
        )
    # on a terminal, the graph's edge to a person proves it; on a pipe, the chain through its writers
    return named_at(
        v,
        t,
        user,
        Cause.PROCESS_WAITS_FOR_INPUT,
        0.95 if wait is None else 0.6,
        summary,
        ev,
        DEBUGGER_FIX if debugger else CHILD_INPUT_FIX if pty else INPUT_FIX,
    )


def _native_input_hit(scene: Scene, v: ProcessView) -> Hit | None:
    """A process with no Python stack at a question on the job's terminal (unzip asking to overwrite, git for a user
    name), named at the line of the parent that waits for it."""
    waiter, t, root = native_at_terminal(scene, v), v.main_thread, scene.view(scene.evidence.root_pid)
    if waiter is None or t is None or root is None:
        return None
    pt = waiter.main_thread if waiter is not v else None
    frame = innermost_user(pt.frames) if pt is not None else None
    cmd = " ".join(v.info.cmdline)[:100]
    who = f"{v.label()} (`{cmd}`)" + (f", which {waiter.label()} waits for at {describe(frame)}," if frame else "")
    ev = [
        f"{v.label()} `{cmd}`: blocked in {t.last.syscall}() on fd {t.last.fd} ({t.last.fd_target or '?'})",
        f"its standard input is {stdin_kind(v.info.stdin)}, the job's own",
    ]
    out = v.info.stdout or ""
    if out.startswith("pipe:") and out != root.info.stdout:
        ev.append(f"its output goes to {out}, a pipe other than the job's own output: what it printed is not shown")
    said = f"{who} reads the terminal and waits for someone to type; nobody will, so it never goes on."
    return named(
        Finding(
            Cause.PROCESS_WAITS_FOR_INPUT,
            0.9,
            said,
            waiter.where(pt, frame) if frame is not None else v.where(t, None),
            tuple(ev),
            NATIVE_INPUT_FIX,
        )
    )


def stopped_rule(scene: Scene) -> list[Hit]:
    """process.stopped: a process of the job is stopped in every sample (SIGSTOP, Ctrl-Z, a debugger); its verdict is
    the state module's (a tracer that works or waits for its user holds it: not hung)."""
    hits = []
    for v in scene.views:
        if not v.stopped:
            continue
        t, h, m = v.main_thread, v.ev.tracer, process_state(v)
        frame = innermost_user(t.frames) if t else None
        how = f"held by its tracer pid {h.pid}: a debugger or strace" if h else "SIGSTOP, Ctrl-Z or a debugger"
        then = "when its tracer continues it or detaches" if h else "when it is continued"
        said = f"{v.label()} is stopped ({how}): it runs again only {then}."
        facts = (m.fact, *([f"it was at {describe(frame)} when it stopped"] * bool(frame)))
        # the state module's reading decides: stopped (proof), or held by a tracer that works or waits
        hits.append(
            named_at(
                v,
                t,
                frame,
                Cause.PROCESS_STOPPED,
                0.95,
                said,
                facts,
                (
                    f"Continue or detach the tracer: `continue` or `detach` in gdb, Ctrl-C in strace (pid {h.pid})"
                    if h and m.state == "traced"
                    else f"kill -CONT {v.pid}  (or `fg` in the shell that suspended it)"
                    + (f"; and its tracer pid {h.pid} if it is stopped too" if h else ""),
                    "If a debugger is attached, detach it or continue the process in it.",
                ),
            )
        )
    return hits


def waits_for_child(v: ProcessView) -> bool:
    """In a Python child-wait frame, or blocked in waitpid (os.system, os.waitpid) or on a pipe
    (reading a child's output) for the whole window."""
    t = v.main_thread
    if t is None:
        return False
    if t.frames and any(sg.matches_any(f, sg.CHILD_WAIT) for f in t.frames[:8]):
        return True
    wchan = t.last.wchan or ""
    reads_pipe = t.last.syscall == "read" and t.last.fd_target == "pipe"
    return t.idle_throughout and (wchan == sg.CHILD_WAIT_WCHAN or reads_pipe or any(w in wchan for w in sg.PIPE_WCHANS))


# Which waited-for child a parent's wait is named by, and how sure that name is: the one that explains most
# (stopped or stuck first). A name only: the verdict is the chain's, followed through that child to its end.
_PICK = (
    "looping",
    "long_sleep",
    "blocked",
    "spinning",
    "stopped",
    "traced",
    "spin_waits",
    "working",
    "wakes",
    "asleep",
    "idle",
    "gone",
)
_SURE = {"looping": 0.85, "long_sleep": 0.85, "blocked": 0.82, "spinning": 0.82, "stopped": 0.82, "working": 0.7}


def waited_children(scene: Scene, v: ProcessView) -> list[ProcessView]:
    """The children a process waiting for a child may wait for: the one ``wait4(pid)`` names (the kernel's
    argument), else every living child that may exit by itself (``views.may_exit``: not a DataLoader or compile
    worker, nor multiprocessing's resource tracker, which a `spawn` Pool's parent never waits for). A zombie child
    has exited: its parent reaps it when it gets to it; it is nothing the parent can wait on for long."""
    named = v.main_thread.last.wait_child if v.main_thread is not None else None
    # the kernel's argument, whoever it names; else own.senders' reading (living, that may exit by itself), of them
    # those that hold the write end of the pipe main reads, where the capture followed it (a ring of pipes: the one
    # before it, not the first child)
    kids = [k for k in scene.children(v.pid) if k.pid == named and not k.state.startswith("Z")]
    writers = {h.pid for w in v.ev.waits if w.tid == v.pid and w.kind == "pipe" for h in w.holders}
    return kids or [k for k in senders(scene, v) if not writers or k.pid in writers]


def reads_a_queue(f: Frame) -> bool:
    """A frame of a multiprocessing.Queue's get."""
    return sg.at(f, "multiprocessing/queues.py", frozenset({"get"}))


def _flushes_a_queue(f: Frame) -> bool:
    """A child's frame that flushes a multiprocessing.Queue before it can exit: its feeder, or the exit's join of it
    (``Queue._finalize_join``; the exit itself, ``util._exit_function``, also joins the child's own children)."""
    return sg.at(f, "multiprocessing/queues.py", frozenset({"_feed", "_finalize_join"}))


def _leads_to(scene: Scene, kid: ProcessView, pid: int) -> bool:
    """``kid``'s waits lead, holder by holder through the job's processes, to ``pid`` (a ring of pipes through it)."""
    seen, todo = {kid.pid}, [kid]
    while todo:
        for h in (h for w in todo.pop().ev.waits for h in w.holders):
            if h.pid == pid:
                return True
            if h.pid not in seen and (x := scene.view(h.pid)) is not None:
                seen.add(h.pid)
                todo.append(x)
    return False


def _child_hit(v: ProcessView, kids: list[ProcessView], scene: Scene) -> Hit:
    """The wait for the child that explains most (stopped first, then stuck, ...), named with what the child was
    measured doing; the verdict stage follows the wait through it (the graph's chain) to its end."""
    measured = {k.pid: process_state(k) for k in kids}
    states = {pid: m.state for pid, m in measured.items()}
    kid = min(kids, key=lambda k: (_PICK.index(states[k.pid]) if states[k.pid] in _PICK else len(_PICK), k.pid))
    state, state_fact = measured[kid.pid].state, measured[kid.pid].fact
    kt = kid.main_thread
    kframe = innermost_explaining(kt.frames) if kt and kt.frames else None
    t = v.main_thread
    pframe = innermost_user(t.frames) if t else None
    kid_cmd = " ".join(kid.info.cmdline)[:120]
    ev = [
        f"{v.label()} waits for child pid {kid.pid} at {described(pframe)}",
        f"child pid {kid.pid} (`{kid_cmd}`) is {kid.state} at {kid.cpu_text()}"
        + (f", in {describe(kframe)}" if kframe else "")
        + f": {state} ({state_fact})",
    ]
    if len(kids) > 1:
        ev.append("its children: " + ", ".join(f"pid {k.pid} {states[k.pid]}" for k in kids[:8]))
    if kt is not None and kt.last.syscall:
        ev.append(f"child pid {kid.pid}: the kernel's {kt.wait_text}")
    if kt is not None and kt.any_frame(_flushes_a_queue):
        ev.append("the child is still flushing a multiprocessing.Queue that nobody reads (join before get)")
    dropped = sg.feeder_failed(v.ev.output_tail or "") if kt is not None and kt.any_frame(reads_a_queue) else None
    if dropped is not None:
        ev.append(f"the job's output: a multiprocessing.Queue's feeder thread could not pickle an item ({dropped})")
    # at the child's line, but where the child waits on what this process holds (a pipe it never writes or closes, a
    # full pipe it never reads, a lock), itself or through others: a cycle through the parent, mended at its own wait
    on_parent = _leads_to(scene, kid, v.pid) and pframe is not None
    kuser = innermost_user(kt.frames) if kt else None
    where = kid.where(kt, kuser) if kuser is not None and not on_parent else v.where(t, pframe)
    said = state_fact if state_fact.startswith(state) else f"{STATE_WORDS.get(state, state)}: {state_fact}"
    summary = f"{v.label()} waits for its child pid {kid.pid}, which is {said}."
    if dropped is not None:
        summary += (
            " The child waits on a multiprocessing.Queue, and the job's output shows a queue's feeder thread could "
            f"not pickle an item ({dropped}): a queue drops such an item with no error to put(), so it never arrives."
        )
    return named(
        Finding(
            Cause.CHILD_WAIT,
            _SURE.get(state, 0.6),
            summary,
            where,
            tuple(ev),
            QUEUE_PICKLE_FIX + CHILD_WAIT_FIX[1:2] if dropped is not None else _child_fix(kid, v.pid),
        )
    )


def _child_fix(kid: ProcessView, parent: int) -> tuple[str, ...]:
    """The fix of a wait for a child whose write to a full pipe or pty only the waiting parent could read, or whose
    read of a pty only it could answer (capture/pipes.py); else the generic one."""
    for w in kid.ev.waits:
        if any(h.pid == parent for h in w.holders):
            if w.kind == "pipe_full":
                return CHILD_OUTPUT_FIX + CHILD_WAIT_FIX[:2]
            if w.kind == "pipe" and (w.path or "").startswith(sg.PTY_PATH):
                return CHILD_INPUT_FIX + CHILD_WAIT_FIX[:2]
            if w.kind == "pipe" and len(w.holders) == 1:
                return CHILD_STDIN_FIX + CHILD_WAIT_FIX[1:2]
    return CHILD_WAIT_FIX


def child_wait_rule(scene: Scene) -> list[Hit]:
    """child.wait: the job waits on a subprocess; hung only when that child is itself stuck."""
    hits = []
    for v in scene.views:
        # A shell or launcher waiting for its child is the job's normal shape, not a cause.
        if v.role in (Role.DATALOADER_WORKER, Role.LAUNCHER) or not v.has_stacks or not waits_for_child(v):
            continue
        kids = waited_children(scene, v)
        # (a launcher of its own, mp.spawn or a Process per rank: the distributed rules explain its ranks)
        if kids and (v.cpu_percent or 0.0) <= IDLE_CPU_PERCENT and not all(k.role == Role.RANK for k in kids):
            hits.append(_child_hit(v, kids, scene))
    return hits


def signal_wait_rule(scene: Scene) -> list[Hit]:
    """process.waits_on: a main thread in ``pause()`` (or a poll of no file with no timeout) for the whole window, no
    other thread of its process able to run, and a handler for a signal that may let it go on: what it waits for is
    that signal, and the words say who in the job could send it (its living children), else that none could. Without
    such a handler the wait-for graph proves it (``proof.unsignalled``) and names it."""
    hits = []
    for v in scene.views:
        t = v.main_thread
        if t is None or not proof.signal_alone(v, t):
            continue
        # signal.sigwait(): the signals it waits for are blocked, not caught; any of them ends it, whoever sends it
        sigwait = t.last.syscall == "sigwait"
        caught = "" if sigwait else proof.signal_names(proof.caught(v, proof.GOES_ON) or 0)  # SigCgt unread: none
        if not caught and not sigwait:
            continue
        waited = t.last.signals if sigwait else None
        kids = [k.pid for k in waited_children(scene, v)]
        others = scene.others_alive(v.pid)
        who = (
            f"its children ({', '.join(map(str, kids))}) may send one"
            if kids
            else f"no child of it that may exit lives; other processes of the job ({', '.join(map(str, others[:4]))}) "
            "live and may send one"
            if others and waited and waited & proof.ENDING
            else "no other thread of it can run and no child of it that may exit lives: "
            + (f"{proof.TIMER_WORDS}; else " if (proof.caught(v, proof.SIGALRM) or 0) and not sigwait else "")
            + "only a process outside the job could send one"
        )
        signalfd = t.last.fd is not None  # (a read of a signalfd: its set, from the kernel's fdinfo)
        frame, call = innermost_user(t.frames), "its read of a signalfd" if signalfd else "sigwait()"
        said = (
            f"{v.label()} waits at {describe(frame)} for a signal alone ({t.wait_text}): "
            + (
                f"{call} ends when {proof.signal_names(waited)} comes"
                if waited
                else f"{call} ends when one of the signals it waits for comes"
                if sigwait
                else f"its handlers catch {caught}"
            )
            + f"; {who}."
        )
        facts = (
            f"{v.label()} main thread: {t.wait_text}, {'a read of a signalfd' if signalfd else 'a wait on no file'}, "
            "for the whole window",
            f"signals it has a handler for (SigCgt), of those that may let it go on: {caught}"
            if caught
            else f"the signals {call} waits for (its set, read from {'fdinfo' if signalfd else 'its memory'}): "
            + proof.signal_names(waited)
            if waited
            else f"the signals {call} waits for were not read (its set, in its own memory)",
        )
        hits.append(named_at(v, t, frame, Cause.PROCESS_WAITS_ON, 0.6, said, facts, SELF_WAIT_FIX["signal"]))
    return hits
