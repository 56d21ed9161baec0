"""One local smoke run of the whole DAG (config/smoke.yaml), shared by the tests that need it.

tests/test_pipeline.py checks it and tests/test_slurm.py compares the Slurm run against it, so a CI run
makes the local smoke run once. Where it lives:

* ``SCALABLE_BAYES_SMOKE_RUN`` unset: a fresh temporary directory of the pytest session;
* ``SCALABLE_BAYES_SMOKE_RUN=DIR``: in DIR, so a later pytest process can reuse it (``.ci/run`` runs the
  suite first and then, as the cluster step, ``./test tests/test_slurm.py`` against the same run). A run in
  DIR is reused only if it finished and was made by the same code: DIR/smoke.json records the exit status
  and a digest of every file that decides the results (sources, workflow, config, lock file); a run of
  other code is refused with a message naming DIR, never compared silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV_VAR = "SCALABLE_BAYES_SMOKE_RUN"
# what decides a smoke run's results: the code, the rules, the configs and the pinned dependencies
CODE = ("src", "workflow", "config", "tools", "Snakefile", "requirements.lock", "pyproject.toml")
SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".txt", ".lock", ".toml", ".json", ".in", ""}


def code_digest(repo: Path = REPO) -> str:
    """SHA-256 over the path and bytes of every code file under ``CODE`` (caches and build output skipped)."""
    h = hashlib.sha256()
    files = []
    for top in CODE:
        p = repo / top
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts
                         and not any(part.endswith(".egg-info") for part in f.parts) and f.suffix in SUFFIXES)
    for f in sorted(files):
        h.update(str(f.relative_to(repo)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def snakemake_cmd(workdir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
            "--configfile", str(REPO / "config" / "smoke.yaml"), "--cores", "2", *extra]


def run_env(mirror: Path) -> dict:
    env = dict(os.environ)
    env["SCALABLE_BAYES_MIRROR"] = str(mirror)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


class StaleSmokeRun(RuntimeError):
    pass


def smoke_run(tmp_path_factory, mirror: Path) -> tuple[Path, str]:
    """(workdir, snakemake output) of a completed local smoke run; makes it if there is none to reuse.
    Raises AssertionError if the run fails, StaleSmokeRun if DIR holds a run of other code."""
    fixed = os.environ.get(ENV_VAR)
    digest = code_digest()
    if fixed:
        wd = Path(fixed).resolve()
        stamp = wd / "smoke.json"
        if stamp.exists():
            rec = json.loads(stamp.read_text())
            if rec.get("code") != digest:
                raise StaleSmokeRun(
                    f"{ENV_VAR}={wd} holds a smoke run of other code (code digest {rec.get('code', '?')[:12]}, "
                    f"this checkout {digest[:12]}); empty that directory or unset {ENV_VAR}")
            out = (wd / "snakemake.out").read_text()
            assert rec.get("returncode") == 0, out[-6000:]
            return wd, out
        if wd.exists() and any(p.name != "config" for p in wd.iterdir()):
            raise StaleSmokeRun(f"{ENV_VAR}={wd} is not empty and has no smoke.json (an unfinished run?); "
                                f"empty that directory or unset {ENV_VAR}")
        wd.mkdir(parents=True, exist_ok=True)
    else:
        wd = tmp_path_factory.mktemp("smoke_a")
    if not (wd / "config").exists():
        (wd / "config").symlink_to(REPO / "config")
    t0 = time.time()
    proc = subprocess.run(snakemake_cmd(wd), capture_output=True, text=True, env=run_env(mirror), timeout=3000)
    out = proc.stdout + proc.stderr
    (wd / "snakemake.out").write_text(out)
    (wd / "smoke.json").write_text(json.dumps({"code": digest, "returncode": proc.returncode,
                                               "seconds": round(time.time() - t0, 1)}))
    assert proc.returncode == 0, out[-6000:]
    return wd, out
