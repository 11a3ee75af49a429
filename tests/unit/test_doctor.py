"""`hangwatch doctor` against controlled environments: variables, limits, a small tmpfs.

Here the tests that start no process; those that do are in tests/e2e/test_doctor.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from hangwatch.doctor.checks import DoctorInputs, check_network_fs, mount_of


def test_network_filesystem_from_the_mount_table(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/vda / ext4 rw 0 0\n10.0.0.2:/export /mnt/data nfs4 rw 0 0\ns3fs /mnt/ckpt fuse.s3fs rw 0 0\n"
    )
    assert mount_of(Path("/mnt/data/shards/0.tar"), mounts.read_text()) == ("/mnt/data", "nfs4")
    c = check_network_fs(
        DoctorInputs(env={}, data_dir=Path("/mnt/data/shards"), checkpoint_dir=Path("/mnt/ckpt"), mounts=mounts)
    )
    assert c.status == "warn" and "data on nfs4" in c.value and "checkpoints on fuse.s3fs" in c.value
    local = check_network_fs(
        DoctorInputs(env={}, data_dir=Path("/srv"), checkpoint_dir=Path(os.getcwd()), mounts=mounts)
    )
    assert local.status == "ok"
