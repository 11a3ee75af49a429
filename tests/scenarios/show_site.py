"""Prints what a job sees of the startup hook: the user's own sitecustomize ran, no hangwatch path."""

import os
import sys

print("user-sitecustomize", os.environ.get("HW_USER_SITECUSTOMIZE"))
print("autobeat-on-path", any("_autobeat" in p for p in sys.path))
