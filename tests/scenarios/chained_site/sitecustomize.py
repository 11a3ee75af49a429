"""A sitecustomize the user already had: hangwatch's startup hook must run it first."""

import os

os.environ["HW_USER_SITECUSTOMIZE"] = "ran"
