"""Bad input and hostile conditions: clear one-line messages, exit 2 only when nothing was captured.

Here the tests that start no process; those that do are in tests/e2e/test_inspect_hostile.py.
"""

from __future__ import annotations

import pytest

# Root without CAP_SYS_PTRACE: refused the same way (py-spy: "Permission denied (os error 13)"), and it reads
# the interpreter and the venv wherever they live (a venv under /root, mode 700, is closed to nobody).


@pytest.mark.parametrize(
    "stderr",
    [
        # py-spy's words, recorded here (shared research, stack capture section 1)
        "Permission Denied: Try running again with elevated permissions by going 'sudo env \"PATH=$PATH\" !!'",
        "Error: Failed to get process executable name. Check that the process is running.\n"
        "Caused by: Permission denied (os error 13)",
    ],
)
def test_recorded_refusals_are_explained(stderr):
    from hangwatch.capture.stacks import _classify_error

    text = _classify_error(4321, stderr)
    assert text.startswith("cannot read stacks of pid 4321: ptrace not permitted"), text
    assert "CAP_SYS_PTRACE" in text


def test_no_interpreter_found_is_not_said_to_be_no_python_process():
    """py-spy's "Failed to find python version" also comes from a Python process whose interpreter is torn down at
    its exit (a healthy trainer after its last step, read under load): the words say what py-spy found, not that
    the process is no Python one (it was, and the report said otherwise)."""
    from hangwatch.capture.stacks import _classify_error

    text = _classify_error(4321, "Error: Failed to find python version from target process")
    assert "not a Python process" not in text and "no Python interpreter in pid 4321" in text, text


def test_the_socket_table_reads_listening_unix_sockets_and_skips_rows_a_path_forges(tmp_path, monkeypatch):
    """/proc/net/unix as the kernel writes it: a listening socket (Flags 00010000) whose path holds a space, a
    connected one, and rows forged by a newline in another socket's path (any process on the host can bind one),
    one garbled, one well formed that repeats the connected socket's inode as listening: the listener is read whole,
    the forged rows are not believed, nothing raises."""
    from hangwatch.capture import syscalls

    net = tmp_path / "42" / "net"
    net.mkdir(parents=True)
    (net / "unix").write_text(
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 5001 /tmp/pymp-x/my listener\n"
        "0000000000000000: 00000003 00000000 00000000 0001 03 5002 /tmp/pymp-x/client\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 5003 a\n"
        "0000: 00000002 00000000 zz 0001 01 123 x\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 5002 forged\n"  # a path's newline, well formed
    )
    monkeypatch.setattr(syscalls, "PROC", tmp_path)
    table = syscalls.SocketTable(42)
    assert table.lookup("5001") == "unix /tmp/pymp-x/my listener (listening)"
    assert table.lookup("5002") is None  # connected (its peer is read elsewhere, sock_diag); a second row is forged
    assert table.lookup("123") is None
