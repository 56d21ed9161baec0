"""The cluster path: the slurm profile (workflow/profiles/slurm) and the distributed ESCA rule on a real
Slurm (`tools/slurm-local up` starts a one-node cluster on this machine; `.ci/run` does it on CI).

The three ways the profile used to fail, each checked here where it happens:
* status hang: without accounting storage `sacct` (the plugin's default status command) never reports a
  job, so the run waits forever; the profile's status command (squeue) sees it finish;
* unschedulable MPI request: the MPI rule asked for R tasks x R CPUs, which a partition of one R-core
  node can never run; now every job of the DAG fits a node of 2 CPUs (tools/slurm/check_requests.py);
* singleton ranks: `srun -n R` without a PMI starts R one-rank MPI jobs; mpi_run now refuses them, and
  the rule launches with `srun --mpi=pmi2`, which gives one job of R ranks, equal to the single process.

End to end: the smoke config runs through the profile from an empty directory, one job is cancelled
mid-run (scancel) and retried by the profile's `retries`, and the claims' verdicts, the run tables
(timing columns aside), the tables and the figure list equal those of the local smoke run of the same
config (the one tests/test_pipeline.py checks: tests/smoke_run.py, reused across pytest processes through
SCALABLE_BAYES_SMOKE_RUN, so CI makes it once).
Without a cluster the cluster tests are skipped with the reason; with SCALABLE_BAYES_SLURM=required (set
by .ci/run after `tools/slurm-local up` succeeded) a missing cluster is a failure instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PROFILE_DIR = REPO / "workflow" / "profiles" / "slurm"
PROFILE = yaml.safe_load((PROFILE_DIR / "config.yaml").read_text())
CHECK = REPO / "tools" / "slurm" / "check_requests.py"
SPEED_CLAIM = re.compile(r"(wall[- ]?time|faster|throughput|tokens/s|tokens per second|speed)", re.I)
TIMING = re.compile(r"(time|wall|sec_per|seconds|per_s|tps|_s$|rss|memory|mem_|throughput|speed|elapsed)", re.I)
SLURM_DEFAULT_MIN_JOB_AGE = 300  # seconds, Slurm's default MinJobAge


def _cluster_problem() -> str | None:
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        return "no Slurm client on PATH (sudo tools/slurm-local up starts a one-node cluster)"
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%a %T"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        return f"sinfo failed: {e}"
    if out.returncode != 0:
        return f"no Slurm controller answers: {out.stderr.strip()[:200]}"
    if not re.search(r"^up (idle|mixed|allocated)", out.stdout, re.M):
        return f"no Slurm node is up and idle: {out.stdout.strip()[:200]!r}"
    return None


@pytest.fixture(scope="module")
def cluster():
    problem = _cluster_problem()
    if problem:
        if os.environ.get("SCALABLE_BAYES_SLURM") == "required":
            pytest.fail(f"SCALABLE_BAYES_SLURM=required but {problem}")
        pytest.skip(problem)
    return True


def _run(cmd, timeout=120, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def _wait_state(jobid: str, states: set[str], timeout=90) -> str:
    deadline = time.time() + timeout
    state = ""
    while time.time() < deadline:
        state = _run(["squeue", "-h", "-t", "all", "-j", jobid, "-o", "%T"]).stdout.strip()
        if state in states:
            return state
        time.sleep(0.5)
    raise AssertionError(f"Slurm job {jobid} not in {states} after {timeout}s (state {state!r})")


# ---------------------------------------------------------------------------------------------------------
# the profile itself (no cluster needed)


def test_one_profile():
    """README, docs and CLI name `profiles/slurm` or `workflow/profiles/slurm`: they are the same files."""
    assert (REPO / "profiles").resolve() == (REPO / "workflow" / "profiles").resolve()
    assert (REPO / "profiles" / "slurm" / "config.yaml").resolve() == (PROFILE_DIR / "config.yaml").resolve()


def test_profile_settings():
    assert PROFILE["executor"] == "slurm"
    # status from squeue; the plugin switches to sacct when MinJobAge < 3 x the first interval and
    # sacct exists: with Slurm's default MinJobAge the profile's squeue stays in force
    assert PROFILE["slurm-status-command"] == "squeue"
    assert 3 * PROFILE["slurm-init-seconds-before-status-checks"] < SLURM_DEFAULT_MIN_JOB_AGE
    assert PROFILE["retries"] >= 1 and PROFILE["show-failed-logs"] is True
    # no placeholder account or partition that sbatch would reject
    assert not {"slurm_account", "slurm_partition"} & set(PROFILE.get("default-resources") or {})
    assert PROFILE["set-resources"]["esca_throughput_mpi_runs"]["mpi"] == "srun --mpi=pmi2"


def test_plugin_is_pinned():
    lock = (REPO / "requirements.lock").read_text()
    assert re.search(r"^snakemake-executor-plugin-slurm==\d+\.\d+\.\d+$", lock, re.M)
    assert re.search(r"^snakemake-executor-plugin-slurm-jobstep==\d+\.\d+\.\d+$", lock, re.M)
    from importlib.metadata import version

    pinned = re.search(r"^snakemake-executor-plugin-slurm==(\S+)$", lock, re.M).group(1)
    assert version("snakemake-executor-plugin-slurm") == pinned


@pytest.mark.parametrize("configfile", ["smoke.yaml", "config.yaml"])
def test_every_job_fits_a_small_node(configfile, tmp_path):
    """The sbatch request of every job (as the plugin writes it) fits one node of 2 CPUs and 8 GB."""
    (tmp_path / "config").symlink_to(REPO / "config")
    out = _run([sys.executable, str(CHECK), "--configfile", str(REPO / "config" / configfile), "--workdir",
                str(tmp_path), "--cpus", "2", "--mem-mb", "8000", "--max-nodes", "1"], timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(r"^ok +esca_throughput_mpi_runs \(\d+ jobs?\): --ntasks=2 --cpus-per-task=1 ", out.stdout, re.M), out.stdout


def test_check_requests_refuses_the_old_mpi_request():
    """The request the MPI rule used to make (R tasks x R CPUs) cannot run on one node of R CPUs."""
    sys.path.insert(0, str(CHECK.parent))
    try:
        import check_requests as cr
    finally:
        sys.path.remove(str(CHECK.parent))
    old = cr.parse_request("sbatch --ntasks=2 --mem-per-cpu 4000 --cpus-per-task=2")
    assert "need 2 nodes" in cr.fits(old, cpus=2, mem_mb=24000, max_nodes=1)
    new = cr.parse_request("sbatch --mem 4000 --ntasks=2 --cpus-per-task=1")
    assert cr.fits(new, cpus=2, mem_mb=24000, max_nodes=1) is None
    assert "MB per node" in cr.fits(new, cpus=2, mem_mb=2000, max_nodes=1)
    assert cr.fits(old, cpus=2, mem_mb=24000, max_nodes=2) is None  # two nodes would do


def test_mpi_run_refuses_a_world_of_the_wrong_size(tmp_path):
    """A process that is not in an MPI job of --ranks ranks stops before it reads or writes anything."""
    pytest.importorskip("mpi4py")
    out_file = tmp_path / "out.parquet"
    p = _run([sys.executable, "-m", "scalable_bayes_papers.esca.mpi_run", "--ranks", "2", "--corpus",
              str(tmp_path / "no_corpus"), "--out", str(out_file)], timeout=300)
    assert p.returncode != 0
    assert "asked for 2 MPI ranks, but this process is in an MPI job of 1" in p.stderr, p.stderr[-2000:]
    assert not out_file.exists()
    bad = _run([sys.executable, "-m", "scalable_bayes_papers.esca.mpi_run", "--ranks", "0", "--corpus", "x",
                "--out", "y"], timeout=300)
    assert bad.returncode == 2 and "must be at least 1" in bad.stderr


# ---------------------------------------------------------------------------------------------------------
# on the cluster


def test_status_without_accounting(cluster, tmp_path):
    """sacct (the plugin's default) never sees a finished job when accounting storage is off: the plugin
    keeps waiting (the hang). squeue, the profile's choice, reports it COMPLETED."""
    from snakemake_executor_plugin_slurm import _get_status_command_default
    from snakemake_executor_plugin_slurm.job_status_query import (
        get_min_job_age,
        query_job_status,
        query_job_status_sacct,
        query_job_status_squeue,
    )

    name = f"sbtest_{uuid.uuid4().hex[:12]}"
    sub = _run(["sbatch", "--parsable", "--job-name", name, "-o", str(tmp_path / "%j.out"), "--wrap", "true"])
    assert sub.returncode == 0, sub.stderr
    jobid = sub.stdout.strip().split(";")[0]
    _wait_state(jobid, {"COMPLETED"})
    log = logging.getLogger("test_slurm")
    by_squeue, _ = asyncio.run(query_job_status(query_job_status_squeue(name), log))
    assert by_squeue == {jobid: "COMPLETED"}
    accounting = _run(["sacct", "-n", "-X", "-j", jobid])
    if "accounting storage is disabled" not in (accounting.stdout + accounting.stderr):
        pytest.skip("this cluster has accounting storage: sacct works too")  # the hang needs a cluster without
    by_sacct, _ = asyncio.run(query_job_status(query_job_status_sacct(name), log))
    assert by_sacct is None  # the plugin treats every job as still running: today's profile hung here
    assert _get_status_command_default() == "sacct"  # what a profile without slurm-status-command gets
    # what the plugin decides with the profile's settings on this cluster (its own rule, __init__.py):
    min_age = get_min_job_age()
    switches_to_sacct = min_age is None or min_age < 3 * PROFILE["slurm-init-seconds-before-status-checks"]
    assert PROFILE["slurm-status-command"] == "squeue" and not switches_to_sacct, min_age


def test_unschedulable_request_is_refused_at_submission(cluster):
    """The old MPI request (2 tasks x 2 CPUs) on a 2-CPU node: the local cluster refuses it at submission
    (EnforcePartLimits=ALL) instead of leaving it pending; the new one (2 x 1 CPU) would start."""
    cpus = int(_run(["sinfo", "-h", "-o", "%c"]).stdout.split()[0])
    old = _run(["sbatch", "--test-only", f"--ntasks={cpus}", f"--cpus-per-task={cpus}", "--wrap", "true"])
    assert old.returncode != 0, old.stdout + old.stderr
    new = _run(["sbatch", "--test-only", f"--ntasks={cpus}", "--cpus-per-task=1", "--mem", "1000", "--wrap", "true"])
    assert new.returncode == 0, new.stderr


def test_check_requests_against_this_cluster(cluster, tmp_path):
    (tmp_path / "config").symlink_to(REPO / "config")
    out = _run([sys.executable, str(CHECK), "--configfile", str(REPO / "config" / "smoke.yaml"), "--workdir",
                str(tmp_path)], timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


def test_srun_without_pmi_starts_singletons(cluster):
    """Plain `srun -n 2` (MpiDefault=none) gives two MPI jobs of one rank each; --mpi=pmi2 gives one of two."""
    code = "from mpi4py import MPI; c = MPI.COMM_WORLD; print(c.rank, c.size, flush=True)"
    plain = _run(["srun", "-n", "2", "--cpus-per-task=1", sys.executable, "-c", code], timeout=300)
    assert plain.returncode == 0, plain.stderr
    mpi_default = _run(["scontrol", "show", "config"]).stdout
    if re.search(r"^MpiDefault\s*=\s*none", mpi_default, re.M):
        assert sorted(plain.stdout.split("\n")[:2]) == ["0 1", "0 1"], plain.stdout
    pmi2 = _run(["srun", "--mpi=pmi2", "-n", "2", "--cpus-per-task=1", sys.executable, "-c", code], timeout=300)
    assert pmi2.returncode == 0, pmi2.stderr
    assert sorted(pmi2.stdout.split()) == sorted("0 2 1 2".split()), pmi2.stdout


# ---------------------------------------------------------------------------------------------------------
# end to end


def _snakemake(workdir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
            "--configfile", str(REPO / "config" / "smoke.yaml"), *extra]


def _env(mirror: Path) -> dict:
    return dict(os.environ, SCALABLE_BAYES_MIRROR=str(mirror), PYTHONHASHSEED="0")


def _squeue(prefix: str) -> list[dict]:
    out = _run(["squeue", "-h", "-t", "all", "-o", "%i|%T|%M|%j|%k"]).stdout
    rows = []
    for line in out.splitlines():
        jobid, state, elapsed, name, comment = line.split("|", 4)
        if name.startswith(prefix):
            secs = sum(int(x) * 60**i for i, x in enumerate(reversed(re.split(r"[:-]", elapsed))))
            rows.append({"id": jobid, "state": state, "seconds": secs, "comment": comment})
    return rows


@pytest.fixture(scope="module")
def runs(cluster, smoke_run, tmp_path_factory, mirror):
    """The Slurm smoke run, one Slurm job cancelled mid-run; compared against the session's local smoke run
    (tests/smoke_run.py: made before the Slurm run, or reused from ``SCALABLE_BAYES_SMOKE_RUN``, as
    ``.ci/run``'s cluster step does with the run its first test call made)."""
    wd_local, _ = smoke_run
    wd_slurm = tmp_path_factory.mktemp("slurm_run")
    (wd_slurm / "config").symlink_to(REPO / "config")
    env = _env(mirror)
    prefix = f"sbtest{uuid.uuid4().hex[:8]}"
    t0 = time.time()
    slurm_log = open(wd_slurm / "snakemake.out", "w")
    # the profile as shipped; only the first status check comes sooner (2 s instead of 20) to keep the
    # test short, and the job names carry a prefix so the test finds its own jobs
    slurm = subprocess.Popen(_snakemake(wd_slurm, "--profile", str(PROFILE_DIR),
                                        "--slurm-init-seconds-before-status-checks", "2",
                                        "--slurm-jobname-prefix", prefix),
                             stdout=slurm_log, stderr=subprocess.STDOUT, env=env)
    cancelled = None
    deadline = time.time() + 2400
    try:
        while slurm.poll() is None and time.time() < deadline:
            if cancelled is None:
                running = [r for r in _squeue(prefix) if r["state"] == "RUNNING" and r["seconds"] >= 3]
                if running:
                    cancelled = running[0]
                    subprocess.run(["scancel", cancelled["id"]], check=True, timeout=60)
            time.sleep(0.5)
        assert slurm.poll() is not None, "the Slurm run did not finish in 40 minutes"
    finally:
        if slurm.poll() is None:
            slurm.terminate()
            slurm.wait(timeout=120)
        left = [r["id"] for r in _squeue(prefix) if r["state"] in {"PENDING", "RUNNING", "COMPLETING"}]
        if left:
            subprocess.run(["scancel", *left], capture_output=True, timeout=60)
        slurm_log.close()
    elapsed = time.time() - t0
    out_slurm = (wd_slurm / "snakemake.out").read_text()
    assert slurm.returncode == 0, out_slurm[-8000:]
    return {"local": wd_local, "slurm": wd_slurm, "out": out_slurm, "cancelled": cancelled, "prefix": prefix,
            "elapsed": elapsed}


def _claims(wd: Path) -> dict[str, dict]:
    return {json.loads(p.read_text())["id"]: json.loads(p.read_text()) for p in (wd / "results").glob("*/claims/*.json")}


def _tables(wd: Path, pattern: str) -> dict[str, Path]:
    return {str(p.relative_to(wd)): p for p in (wd / "results").glob(pattern)}


def _assert_same_frames(a: pd.DataFrame, b: pd.DataFrame, rel: str):
    timing = [c for c in a.columns if TIMING.search(str(c))]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing), check_exact=True, obj=rel)


def test_smoke_runs_through_slurm(runs):
    out = runs["out"]
    ids = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    assert len(ids) > 10, out[-3000:]
    total = re.search(r"^total\s+(\d+)\s*$", out, re.M)
    assert total and re.search(rf"^{total.group(1)} of {total.group(1)} steps \(100%\) done", out, re.M), out[-3000:]
    assert "ESCA over 2 ranks" in "".join(p.read_text() for p in (runs["slurm"] / "logs").rglob("*mpi*/*.log"))
    # nothing of this run is left in the queue
    assert not [r for r in _squeue(runs["prefix"]) if r["state"] in {"PENDING", "RUNNING", "COMPLETING"}]
    print(f"Slurm run: {len(ids)} Slurm jobs ({ids[0]}..{ids[-1]}), {runs['elapsed']:.0f} s")


def test_cancelled_job_is_retried(runs):
    c = runs["cancelled"]
    assert c is not None, "no Slurm job ran long enough to be cancelled"
    out = runs["out"]
    assert re.search(rf"SLURM-job '{c['id']}' failed, SLURM status is: 'CANCELLED'", out), out[-4000:]
    # the same rule and wildcards (the Slurm log directory) were submitted again, under another job id
    logs = re.findall(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)/\d+\.log\)", out)
    log_dir = next(d for j, d in logs if j == c["id"])
    again = [j for j, d in logs if d == log_dir and j != c["id"]]
    assert again and int(again[0]) > int(c["id"]), (c, logs)
    # the failed job's Slurm log is kept and named in the error (show-failed-logs prints the rule's log;
    # Snakemake 9.27 stops there when that log is empty, so the name is what the user always gets)
    slurm_log = Path(log_dir) / f"{c['id']}.log"
    assert f"{slurm_log} (check log file(s) for error details)" in out or str(slurm_log) + "," in out, out[-3000:]
    assert "CANCELLED" in slurm_log.read_text()


def test_slurm_results_equal_the_local_run(runs):
    wl, ws = runs["local"], runs["slurm"]
    ca, cb = _claims(wl), _claims(ws)
    assert ca and ca.keys() == cb.keys()
    for cid, a in ca.items():
        if not SPEED_CLAIM.search(a["claim"]):  # a verdict about speed is a measurement
            assert a["holds"] == cb[cid]["holds"], cid
    md_ids = lambda wd: set(re.findall(r"\b[A-Z]+-[A-Za-z0-9-]+\b", (wd / "results" / "claims.md").read_text()))
    assert md_ids(wl) == md_ids(ws)
    figures = lambda wd: sorted(str(p.relative_to(wd)) for p in (wd / "results").glob("*/figures/*"))
    assert figures(wl) and figures(wl) == figures(ws)
    runs_a, runs_b = _tables(wl, "*/runs/**/*.parquet"), _tables(ws, "*/runs/**/*.parquet")
    assert runs_a and runs_a.keys() == runs_b.keys()
    for rel, pa in runs_a.items():
        _assert_same_frames(pd.read_parquet(pa), pd.read_parquet(runs_b[rel]), rel)
    tab_a, tab_b = _tables(wl, "**/*.csv"), _tables(ws, "**/*.csv")
    assert tab_a and tab_a.keys() == tab_b.keys()
    for rel, pa in tab_a.items():
        _assert_same_frames(pd.read_csv(pa), pd.read_csv(tab_b[rel]), rel)
    mpi = [pd.read_parquet(p) for p in (ws / "results").glob("*/runs/mpi/*.parquet")]
    assert mpi and all((m["ranks"] == 2).all() for m in mpi)


def test_mpi_under_srun_equals_the_single_process_run(runs, tmp_path):
    """On the corpus the Slurm run built: `srun --mpi=pmi2 -n 2` (the profile's launcher) gives the same
    trace as one process; `srun -n 2` without PMI is refused by mpi_run (no output, clear message)."""
    mpi_runs = sorted((runs["slurm"] / "results").glob("*/runs/mpi/*~R*.parquet"))
    assert mpi_runs
    corpus = runs["slurm"] / "data" / "processed" / mpi_runs[0].name.split("~R")[0]  # the MPI rule's corpus
    args = ["-m", "scalable_bayes_papers.esca.mpi_run", "--corpus", str(corpus), "--n-topics", "5", "--n-iter", "2",
            "--evaluate-every", "1", "--max-train-docs", "100", "--max-test-docs", "20", "--seed", "3"]
    single = _run([sys.executable, *args, "--ranks", "1", "--out", str(tmp_path / "one.parquet")], timeout=600)
    assert single.returncode == 0, single.stderr[-3000:]
    two = _run(["srun", "--mpi=pmi2", "-n", "2", "--cpus-per-task=1", sys.executable, *args, "--ranks", "2",
                "--out", str(tmp_path / "two.parquet")], timeout=600)
    assert two.returncode == 0, two.stderr[-3000:]
    a, b = pd.read_parquet(tmp_path / "one.parquet"), pd.read_parquet(tmp_path / "two.parquet")
    assert (a["ranks"] == 1).all() and (b["ranks"] == 2).all()
    _assert_same_frames(a.drop(columns=["ranks"]), b.drop(columns=["ranks"]), "mpi trace")
    bad = _run(["srun", "-n", "2", "--cpus-per-task=1", sys.executable, *args, "--ranks", "2",
                "--out", str(tmp_path / "bad.parquet")], timeout=600)
    assert bad.returncode != 0 and "asked for 2 MPI ranks, but this process is in an MPI job of 1" in bad.stderr
    assert not (tmp_path / "bad.parquet").exists()
