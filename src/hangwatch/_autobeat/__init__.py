"""The startup hook `hangwatch run` puts on a job's PYTHONPATH (see sitecustomize.py)."""
