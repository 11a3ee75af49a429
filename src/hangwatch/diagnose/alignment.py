"""The ranks' collectives paired by call site, not by number: where their sequences first differ, and who differs.

torch pairs collectives by their sequence number in a process group. When one rank skips a collective (an
``if rank != k: barrier()``) or calls one more, every later pair is one off: a barrier may complete against an
all_reduce, the sizes of an all_reduce may not even match, and the job hangs, or fails, collectives later at a
line where nothing is wrong. Each rank's recorder keeps, per collective, the user's line that called it (its
``site``); reading the ranks' sequences side by side by those sites finds the first collective where they
differ, and so the line where the ranks went different ways.

Who differs: the ranks whose call there is not the majority's. With as many ranks on each side (two ranks), the
call counts of the recorded window decide: a rank that called the others' collective fewer times skipped it; a
rank that called a collective the others never called made one more. With two ranks those two readings are the
same fact (one called it, the other did not), and the finding says so.
"""

from __future__ import annotations

from enum import Enum

from hangwatch.ranges import ranks_label
from hangwatch.records.values import frozen

# Ops whose inputs must have the same shape on every rank (a gather's root or an all_to_all's splits legitimately
# differ): at the same call site, a different size is a mismatch.
SAME_SIZE_OPS = frozenset(
    {"all_reduce", "allreduce", "broadcast", "reduce", "all_gather", "allgather", "_allgather_base"}
)


class SkewKind(str, Enum):
    """How the culprit's call at the first differing collective relates to the others'."""

    SKIPPED = "skipped"  # it never called the others' collective there (it called it fewer times)
    EXTRA = "extra"  # it called a collective the others did not
    SIZE = "size"  # the same call site, with other sizes
    DIFFERENT = "different"  # another collective at another line, with nothing to say which is right


@frozen
class Call:
    """One collective a rank entered: its kind, its call site (``/abs/train.py:88``, "" when unrecorded), sizes."""

    op: str
    site: str
    sizes: str

    def text(self) -> str:
        """``barrier at train.py:15`` (``all_reduce [[4]]`` without a site)."""
        at = (
            f" at {self.site.rsplit('/', 1)[-1]}"
            if self.site
            else (f" {self.sizes}" if self.sizes not in ("[]", "") else "")
        )
        return f"{self.op}{at}"


@frozen
class Skew:
    """The first collective of a process group where the ranks' calls differ, read by call site."""

    seq: int  # its sequence number
    kind: SkewKind
    culprits: tuple[int, ...]
    others: tuple[int, ...]
    theirs: Call  # the culprits' call at ``seq``
    ours: Call  # the others' call at ``seq``
    off: int  # how many collectives the later pairs are off by (EXTRA, SKIPPED)
    by_site: bool  # the recorder gave call sites (else: paired by op and sizes)
    since: int  # the first sequence number every rank's window holds

    @property
    def culprit_call(self) -> Call:
        """The call that went wrong: the one added (EXTRA), the one skipped (SKIPPED), else the culprits' own."""
        return self.ours if self.kind == SkewKind.SKIPPED else self.theirs

    def said(self) -> str:
        """The finding's first sentence: who differs, where, and what became of the later pairs."""
        c, o = ranks_label(self.culprits), ranks_label(self.others)
        off = "one" if self.off == 1 else str(self.off)
        shifted = f"; since then every collective is paired {off} off"
        if self.kind == SkewKind.SIZE:
            return (
                f"{c.capitalize()} called {self.theirs.text()} with sizes {self.theirs.sizes} where {o} passed "
                f"{self.ours.sizes} (collective #{self.seq})"
            )
        if self.kind == SkewKind.SKIPPED:
            return f"{c.capitalize()} never called {self.ours.text()} (collective #{self.seq}; {o} did){shifted}"
        if self.kind == SkewKind.EXTRA:
            both = (
                " (one rank called it and the other did not: a collective in a branch that depends on the rank)"
                if len(self.culprits) == len(self.others) == 1
                else ""
            )
            added = f"{c.capitalize()} called {self.theirs.text()} as collective #{self.seq}, which {o} did not"
            return f"{added}{both}{shifted}"
        return (
            f"The ranks' calls first differ at collective #{self.seq}: {c} called {self.theirs.text()}, {o} "
            f"{self.ours.text()}; every later collective is paired across different calls"
        )


MAX_OFF = 3  # a rank that skipped or added up to this many collectives in a row is recognised

# A recorded collective as the recorders' summaries keep it: (seq, op, sizes, site).
Op = tuple[int, str, str, str]


def _site(o: Op) -> str:
    """A call site as the ranks can share it: the file's name and line (nodes may hold the script at other paths)."""
    return o[3].rsplit("/", 1)[-1]


def same(a: Op | None, b: Op | None, by_site: bool = True) -> bool:
    """Two calls that pair as the same collective: one op, from one line (``by_site``), else with the same sizes
    where those must match (a gather's or an all_to_all's differ by rank)."""
    if a is None or b is None:
        return True  # a rank that has not reached it yet disagrees with nobody
    if a[1] != b[1]:
        return False
    if by_site:
        return _site(a) == _site(b)
    return a[2] == b[2] or a[1] not in SAME_SIZE_OPS


def _call(o: Op) -> Call:
    return Call(o[1], o[3], o[2])


def align(sequences: dict[int, tuple[Op, ...]], hang_seq: int | None = None) -> Skew | None:
    """``sequences``: rank -> its recorded collectives of one process group, oldest first (each rank's window).
    The first collective where the ranks' calls differ and who differs, where the later calls show it (the
    pairs one off, two or more of them, where without the shift they disagree); ``hang_seq``: the collective
    the ranks wait in, before which different collectives from known lines are told even where nothing shows
    who differs (the majority, else the side without the lowest rank). The same collective called from
    different lines (``if rank == 0: broadcast(...)`` / ``else: broadcast(...)``) pairs well: passed over unless
    the pairs after it run one off. None where every rank made the same calls, or where they differ only at
    the hang's collective and nothing says more (the wait's own analysis names that mismatch)."""
    if len(sequences) < 2 or not all(sequences.values()):
        return None
    since = max(ops[0][0] for ops in sequences.values())
    ordered = {r: _window(ops, since) for r, ops in sorted(sequences.items())}
    if sum(1 for k in ordered.values() if k) < 2:
        return None
    ref = max(ordered.values(), key=len)
    for i in _differences(ordered, ref):
        at = [k[i] for k in ordered.values() if i < len(k)]
        by_site = all(o[3] for o in at)  # one rank's recorder without frames: every rank by op and sizes here
        if not all(same(at[0], o, by_site) for o in at):
            skew = _skew_at(ordered, i, since, hang_seq, by_site)
            if skew is not None or not _same_op(at):
                return skew
        elif (size := _size_skew(ordered, i, since)) is not None:
            return size
    return None


def _window(ops: tuple[Op, ...], since: int) -> list[Op]:
    """A rank's calls from ``since`` on, one per sequence number (a gap or a repeat, never seen in torch's
    recorder for collectives, ends it)."""
    first = ops[0][0]
    if ops[-1][0] - first + 1 == len(ops):
        return list(ops[max(0, since - first) :])
    out: list[Op] = []
    for o in ops:
        if o[0] >= since:
            if o[0] != since + len(out):
                break
            out.append(o)
    return out


def _differences(ordered: dict[int, list[Op]], ref: list[Op]) -> list[int]:
    """Every index where some rank's recorded call is not exactly ``ref``'s, in order (list compares in C: a
    healthy job costs one comparison per rank)."""
    out: set[int] = set()
    for k in ordered.values():
        n = len(k)
        if k == ref[:n]:
            continue
        out.update(i for i in range(n) if k[i] != ref[i])
    return sorted(out)


def _skew_at(ordered: dict[int, list[Op]], i: int, since: int, hang_seq: int | None, by_site: bool) -> Skew | None:
    """Who differs at index ``i``, where the ranks' calls first differ."""
    sides: list[list[int]] = []
    for r, calls in ordered.items():
        if i >= len(calls):
            continue
        side = next((s for s in sides if same(ordered[s[0]][i], calls[i], by_site)), None)
        if side is None:
            sides.append([r])
        else:
            side.append(r)
    if len(sides) < 2:
        return None
    sides.sort(key=lambda rs: (-len(rs), min(rs)))
    seq = since + i
    majority = len(sides[0]) > len(sides[1])
    tries = [(sides[0], sides[1])] if majority else [(sides[0], sides[1]), (sides[1], sides[0])]

    def skew(kind: SkewKind, culprits: list[int], ours: list[int], off: int) -> Skew:
        theirs_call, ours_call = _call(ordered[culprits[0]][i]), _call(ordered[ours[0]][i])
        return Skew(
            seq, kind, tuple(sorted(culprits)), tuple(sorted(ours)), theirs_call, ours_call, off, by_site, since
        )

    for kind in (SkewKind.EXTRA, SkewKind.SKIPPED):
        for ours, theirs in tries:
            off = _shift(ordered[ours[0]], ordered[theirs[0]], i, kind, by_site)
            if off:
                # the culprit's own call first: with a majority, every other side; else the side that shifted
                culprits = theirs if not majority else [*theirs, *(r for rs in sides[2:] for r in rs)]
                return skew(kind, culprits, ours, off)
    if majority and len(sides) == 2:
        # The hang may come at the very next call (a skipped barrier that completed the others' one, then the
        # next step's all_reduce against their second barrier): one pair after the shift is all the ranks hold.
        # With a majority, one pair decides, when it fits one way only (a swap fits both: nothing is said).
        ours, theirs = sides
        fits = [
            (kind, off)
            for kind in (SkewKind.EXTRA, SkewKind.SKIPPED)
            if (off := _shift(ordered[ours[0]], ordered[theirs[0]], i, kind, by_site, min_pairs=1))
        ]
        if len(fits) == 1:
            return skew(fits[0][0], theirs, ours, fits[0][1])
    at = [k[i] for k in ordered.values() if i < len(k)]
    if by_site and hang_seq is not None and seq < hang_seq and not _same_op(at):
        return skew(SkewKind.DIFFERENT, [r for rs in sides[1:] for r in rs], sides[0], 0)
    return None


def _same_op(at: list[Op]) -> bool:
    """The calls are one op, with the same sizes where those must match (from any line)."""
    return len({o[1] for o in at}) <= 1 and len({o[2] for o in at if o[1] in SAME_SIZE_OPS}) <= 1


MIN_PAIRS = 2  # later pairs a shift must put right, at least (one, where a majority of ranks made the other call)


def _shift(ours: list[Op], theirs: list[Op], i: int, kind: SkewKind, by_site: bool, min_pairs: int = 0) -> int:
    """How many collectives ``theirs`` added (EXTRA) or skipped (SKIPPED) at index ``i`` against ``ours``: a
    shift that puts right the later pairs, every one both hold and at least MIN_PAIRS, where without it some
    disagree (a repeating pattern that agrees either way proves no shift); 0 when none up to MAX_OFF does."""
    straight = list(zip(theirs[i + 1 :], ours[i + 1 :], strict=False))
    if all(same(x, y, by_site) for x, y in straight):
        return 0  # the calls after it pair as they are: one call from another line, not a shift
    for off in range(1, MAX_OFF + 1):
        a, b = (theirs[i + off :], ours[i:]) if kind == SkewKind.EXTRA else (theirs[i:], ours[i + off :])
        pairs = list(zip(a, b, strict=False))
        if len(pairs) >= (min_pairs or MIN_PAIRS) and all(same(x, y, by_site) for x, y in pairs):
            return off
    return 0


def _size_skew(ordered: dict[int, list[Op]], i: int, since: int) -> Skew | None:
    """The same call everywhere at index ``i``, with different sizes where they must match."""
    at = {r: k[i] for r, k in ordered.items() if i < len(k) and k[i][1] in SAME_SIZE_OPS}
    sizes: dict[str, list[int]] = {}
    for r, o in at.items():
        sizes.setdefault(o[2], []).append(r)
    if len(sizes) < 2:
        return None
    groups = sorted(sizes.values(), key=lambda rs: (-len(rs), min(rs)))
    ours, theirs = groups[0], [r for g in groups[1:] for r in g]
    return Skew(
        since + i,
        SkewKind.SIZE,
        tuple(sorted(theirs)),
        tuple(sorted(ours)),
        _call(at[theirs[0]]),
        _call(at[ours[0]]),
        0,
        bool(at[ours[0]][3]),
        since,
    )
