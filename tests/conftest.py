"""Shared fixtures: repository paths, the local data mirror, seeds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_path() -> Path | None:
    p = Path(os.environ.get("SCALABLE_BAYES_MIRROR", REPO.parent / "shared" / "data"))
    return p if p.is_dir() else None


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    p = mirror_path()
    if p is None:
        pytest.skip("no local data mirror: set SCALABLE_BAYES_MIRROR to a copy of shared/data")
    return p


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, mirror):
    """(workdir, output) of one completed local smoke run of the whole DAG, shared by the pipeline and the
    Slurm tests (tests/smoke_run.py: where it lives, when it is reused)."""
    from smoke_run import StaleSmokeRun, smoke_run as make

    try:
        return make(tmp_path_factory, mirror)
    except StaleSmokeRun as e:
        pytest.fail(str(e))


@pytest.fixture
def seed() -> int:
    return 189212
