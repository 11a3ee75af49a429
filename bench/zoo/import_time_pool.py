"""A worker pool started while its module is still being imported: map waits forever.

report: https://github.com/huggingface/datasets/issues/7756
saw: importing a module that runs ds.map(f, num_proc=2) at top level hangs.
mechanism: the pool's result thread must import the half-initialised module to unpickle a result of a class defined in it, and blocks on the module's import lock, which the main thread holds while it waits in map (a reading of the report; maintainers did not diagnose it).
expect: hung code.deadlock
accept: child.wait
where: _zoo_import_me.py
"""
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _zoo_import_me  # noqa: F401  - the pool runs inside this import
