"""Figures are written as a PNG + PDF pair, atomically: a failure leaves neither new file and no temporary one."""

from __future__ import annotations

import pytest

from scalable_bayes.plotting.style import plt, savefig


def _figure():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [1, 0])
    return fig


def test_savefig_writes_the_pair(tmp_path):
    savefig(_figure(), tmp_path / "Fig.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Fig.pdf", "Fig.png"]
    assert (tmp_path / "Fig.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "Fig.pdf").read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize("failing", ["png", "pdf"])
@pytest.mark.parametrize("before", [False, True])
def test_a_failed_save_leaves_neither_file(tmp_path, monkeypatch, failing, before):
    png, pdf = tmp_path / "Fig.png", tmp_path / "Fig.pdf"
    if before:  # an earlier run's pair stays as it was
        png.write_bytes(b"old png")
        pdf.write_bytes(b"old pdf")
    fig = _figure()
    real = fig.savefig

    def savefig_failing(fname, *args, format=None, **kwargs):
        if format == failing:
            raise OSError("No space left on device")
        return real(fname, *args, format=format, **kwargs)

    monkeypatch.setattr(fig, "savefig", savefig_failing)
    with pytest.raises(OSError, match="No space left"):
        savefig(fig, png)
    names = sorted(p.name for p in tmp_path.iterdir())
    if before:
        assert names == ["Fig.pdf", "Fig.png"]
        assert png.read_bytes() == b"old png" and pdf.read_bytes() == b"old pdf"
    else:
        assert names == [], names  # no PNG without its PDF, no temporary file
    assert not plt.fignum_exists(fig.number), "the figure is closed even when saving fails"


def test_a_failed_second_rename_removes_the_first(tmp_path, monkeypatch):
    import os

    real_replace = os.replace
    calls = []

    def replace_failing(src, dst):
        calls.append(dst)
        if str(dst).endswith(".pdf"):
            raise OSError("rename failed")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_failing)
    with pytest.raises(OSError, match="rename failed"):
        savefig(_figure(), tmp_path / "Fig.png")
    assert len(calls) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []
