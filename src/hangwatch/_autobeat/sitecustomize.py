"""hangwatch autobeat: makes every Python process of a PyTorch job beat, with no code change.

``hangwatch run`` puts this directory first on the job's PYTHONPATH. At interpreter start Python
imports this ``sitecustomize``; it first runs the ``sitecustomize`` that was there before (if any)
and takes this directory off ``sys.path`` again. Then, once ``torch`` is imported (never before, and
never importing it itself), it installs:

- a global optimizer step post-hook: one beat per ``optimizer.step()``; the step is the number of
  optimizer steps taken (the largest count of any optimizer in the process);
- a wrapper of ``_BaseDataLoaderIter.__next__``: one beat per batch delivered; and, under ``--on-hang heal``, for
  each multiprocessing DataLoader iterator, the batch and sample indices each worker holds, in a memory-mapped file
  ``<pid>-<n>.dl`` the main process writes;
- phases, so an incident says what the job was doing: ``checkpoint`` around ``torch.save`` and
  ``torch.distributed.checkpoint.save``, ``compile`` between torch's compile start and end
  callbacks, ``validation`` while a Lightning evaluation loop or ``transformers.Trainer.evaluate``
  runs. Checkpoint and compile phases carry a deadline (``$HANGWATCH_PHASE_TIMEOUT``, the run's
  ``--max-slow``): no stall is declared inside them before it;
- checkpoints, for a restart to resume from: each ``torch.save`` / ``torch.distributed.checkpoint.save``
  to a path, Lightning's ``Trainer.save_checkpoint`` and the HF Trainer's ``checkpoint-N`` directories
  are appended as one JSON line to ``$HANGWATCH_HEARTBEAT_DIR/checkpoints.jsonl`` (path, step, kind).

A beat writes into this process's 128-byte memory-mapped slot ``<pid>.hb`` under
``$HANGWATCH_HEARTBEAT_DIR``, the layout ``hangwatch.beat`` uses (the slot carries ``$RANK``).
Standard library only, any Python 3: the job's interpreter need not have hangwatch installed. The hook's rooms are
the package ``_hangwatch_hook`` beside this file (imported before this directory leaves ``sys.path``).
Everything fails quietly: a heartbeat must never break the job. ``HANGWATCH_AUTOBEAT=0`` (what
``hangwatch run --no-autobeat`` sets) leaves the job untouched.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import _hangwatch_hook  # type: ignore[import-not-found]  # this directory is still first on sys.path
except Exception:  # noqa: BLE001 - a heartbeat must never break the job
    _hangwatch_hook = None


def _chain() -> None:
    """Run the sitecustomize this one shadows; leave sys.path as the job would have it."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # type: ignore[import-not-found]  # noqa: F401 - the next one on sys.path, if any
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            _site_error(e)
    except Exception as e:  # noqa: BLE001 - what site.py does with a broken sitecustomize: say so, go on
        _site_error(e)
    if "sitecustomize" not in sys.modules and mine is not None:
        sys.modules["sitecustomize"] = mine  # none further down: site.py expects to find this one


def _site_error(e: BaseException) -> None:
    sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(e).__name__}: {e}\n")


_chain()
if _hangwatch_hook is not None:
    try:
        _hangwatch_hook.install()
    except Exception:  # noqa: BLE001, S110 - a heartbeat must never break the job
        pass
