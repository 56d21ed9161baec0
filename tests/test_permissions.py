"""Outputs a team can share: every file the pipeline writes gets the permissions the umask gives
(``tempfile.mkstemp`` alone would leave 0600 files that colleagues cannot read)."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from scalable_bayes.utils import atomic_path, save_table, write_json_atomic, write_text_atomic


@pytest.fixture
def umask():
    def set_mask(m):
        os.umask(m)
    old = os.umask(0o022)
    os.umask(old)
    yield set_mask
    os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_outputs_follow_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    write_text_atomic(tmp_path / "a.txt", "x")
    write_json_atomic(tmp_path / "b.json", {"a": 1})
    save_table(pd.DataFrame({"a": [1]}), tmp_path / "c.csv")
    with atomic_path(tmp_path / "d.bin") as tmp:
        tmp.write_bytes(b"1")
    for name in ["a.txt", "b.json", "c.csv", "d.bin"]:
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_fetched_raw_directory_follows_the_umask(tmp_path, umask):
    from scalable_bayes.utils import chmod_as_created

    umask(0o027)
    d = tmp_path / "raw"
    d.mkdir(mode=0o700)
    chmod_as_created(d)
    assert stat.S_IMODE(d.stat().st_mode) == 0o750
