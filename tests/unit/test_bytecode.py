"""Where hangwatch's command line keeps its bytecode: beside the source as Python does, except where Python may not
write it there (PYTHONDONTWRITEBYTECODE) and hangwatch's own is missing (an editable install): then under its cache,
and never beside any source."""

from __future__ import annotations

import sys

import pytest

from hangwatch._bytecode import use_own_cache


@pytest.fixture
def interpreter(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    package = tmp_path / "hangwatch"
    package.mkdir()
    (package / "cli.py").write_text("")
    return package


def test_without_its_own_bytecode_it_reads_and_writes_it_under_its_cache(interpreter, tmp_path):
    cache = use_own_cache(str(interpreter))
    assert cache == str(tmp_path / "cache" / "hangwatch" / "pycache")
    assert sys.pycache_prefix == cache and sys.dont_write_bytecode is False


def test_with_its_bytecode_beside_the_source_nothing_changes(interpreter):
    (interpreter / "__pycache__").mkdir()
    (interpreter / "__pycache__" / f"cli.{sys.implementation.cache_tag}.pyc").write_bytes(b"")
    assert use_own_cache(str(interpreter)) is None
    assert sys.pycache_prefix is None and sys.dont_write_bytecode is True


def test_where_python_may_write_it_nothing_changes(interpreter, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert use_own_cache(str(interpreter)) is None and sys.pycache_prefix is None


def test_a_cache_that_cannot_be_made_leaves_it_as_it_was(interpreter, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # a file where the directory would go
    assert use_own_cache(str(interpreter)) is None
    assert sys.pycache_prefix is None and sys.dont_write_bytecode is True


def test_a_cache_others_could_write_code_into_is_never_used(interpreter, tmp_path):
    cache = tmp_path / "cache" / "hangwatch" / "pycache"
    cache.mkdir(parents=True)
    cache.chmod(0o777)  # a shared XDG_CACHE_HOME: anyone could plant bytecode there
    assert use_own_cache(str(interpreter)) is None
    assert sys.pycache_prefix is None and sys.dont_write_bytecode is True
