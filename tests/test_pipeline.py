"""Smoke run of the whole DAG on config/smoke.yaml, in a scratch working directory.

* run A completes, writes every claim and results/claims.md, and `snakemake --report` works;
* run B is interrupted mid-way (SIGINT, as Ctrl-C), then re-run: it finishes only the remaining jobs;
* A and B give identical tables (byte-identical unless a table carries wall-time columns, which are
  measurements; those columns are excluded and every other value must be equal exactly).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
from smoke_run import run_env, snakemake_cmd

pytestmark = [pytest.mark.slow, pytest.mark.pipeline]

SPEED_CLAIM = re.compile(r"(wall[- ]?time|faster|throughput|tokens/s|tokens per second|speed)", re.I)
TIMING = re.compile(r"(time|wall|seconds|per_s|tps|_s$|rss|memory|mem_|throughput|speed|elapsed)", re.I)


def _snakemake_cmd(repo: Path, workdir: Path, *extra: str) -> list[str]:
    return snakemake_cmd(workdir, *extra)


def _workdir(tmp_path_factory, repo: Path, name: str) -> Path:
    wd = tmp_path_factory.mktemp(name)
    (wd / "config").symlink_to(repo / "config")
    return wd


def _env(mirror: Path) -> dict:
    return run_env(mirror)


def _sigint_default() -> None:
    """Run in the child before exec: SIGINT back to its default disposition.

    An ignored SIGINT (SIG_IGN) is inherited across fork and exec, and so is the test's: a suite started as a
    background job of a script, under ``nohup`` or by some CI runners ignores it. Python then installs no
    KeyboardInterrupt handler, the interrupt below never reaches Snakemake and the run completes.
    (``subprocess``'s ``restore_signals`` resets SIGPIPE, SIGXFZ and SIGXFSZ only, not SIGINT.)
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _job_total(output: str) -> int:
    m = re.findall(r"^total\s+(\d+)\s*$", output, re.M)
    return int(m[0]) if m else 0


@pytest.fixture(scope="module")
def run_a(smoke_run):
    """Run A: the session's local smoke run (tests/smoke_run.py), shared with tests/test_slurm.py."""
    return smoke_run


def test_smoke_run_writes_every_target_and_claim(run_a):
    wd, out = run_a
    claims_md = wd / "results" / "claims.md"
    assert claims_md.exists()
    claim_files = sorted((wd / "results").glob("*/claims/*.json"))
    assert claim_files, "no claim was written"
    for f in claim_files:
        c = json.loads(f.read_text())
        assert {"id", "paper", "claim", "measured", "holds", "scale"} <= set(c), f
        assert c["scale"].startswith("smoke"), f
        assert c["id"] in claims_md.read_text()
    assert (wd / "results" / "tables" / "datasets.csv").exists()
    # every rule left a log
    assert any((wd / "logs").rglob("*.log"))
    # nothing half-written anywhere
    leftovers = [p for p in wd.rglob("*.part*") if ".snakemake" not in p.parts]
    assert not leftovers, leftovers


def test_report_html(run_a, repo, mirror):
    wd, _ = run_a
    proc = subprocess.run(_snakemake_cmd(repo, wd, "--report", "results/report.html"),
                          capture_output=True, text=True, env=_env(mirror), timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    html = (wd / "results" / "report.html").read_text(errors="replace")
    assert len(html) > 10_000 and "datasets.csv" in html


def _tables(wd: Path) -> dict[str, Path]:
    return {str(p.relative_to(wd)): p for p in (wd / "results").rglob("*.csv")}


def test_interrupted_run_resumes_and_results_are_identical(run_a, tmp_path_factory, repo, mirror):
    wd_a, _ = run_a
    wd = _workdir(tmp_path_factory, repo, "smoke_b")
    env = _env(mirror)
    dry = subprocess.run(_snakemake_cmd(repo, wd, "-n"), capture_output=True, text=True, env=env, timeout=600)
    total_a = _job_total(dry.stdout + dry.stderr)
    assert total_a > 3, (dry.stdout + dry.stderr)[-3000:]
    # the run's output goes to a file, not a pipe: nobody reads a pipe while the loop below waits, and a run that
    # writes more than the pipe's buffer (64 KiB) before the first corpus is processed would block on the write
    log = open(wd / "interrupted_run.log", "w")
    proc = subprocess.Popen(_snakemake_cmd(repo, wd), stdout=log, stderr=subprocess.STDOUT,
                            text=True, env=env, start_new_session=True, preexec_fn=_sigint_default)
    deadline = time.time() + 1200
    processed = wd / "data" / "processed"
    while time.time() < deadline and proc.poll() is None:
        if processed.exists() and any(processed.rglob("meta.json")):
            break
        time.sleep(0.5)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    # Interrupt as Ctrl-C does: SIGINT to the whole process group. Not SIGTERM: Snakemake 9.27's SIGTERM handler
    # (JobScheduler.exit_gracefully) takes the scheduler's non-reentrant lock, and when the signal lands while the
    # main thread holds that lock (it does while it records the jobs that the same signal just killed) the
    # process hangs for good, keeping its lock on the directory (seen in CI: errors printed, then no exit in
    # 300 s). SIGINT raises KeyboardInterrupt instead, which unwinds the lock and cancels the jobs.
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=300)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = True
    log.close()
    if (wd / "results" / "claims.md").exists():
        tail = (wd / "interrupted_run.log").read_text(errors="replace")[-3000:]
        pytest.fail(
            f"the run completed (exit status {proc.returncode}) although SIGINT was sent to its process group: "
            "the interrupt did not stop Snakemake, so the resume below would test nothing. The child is started "
            "with SIGINT at its default; was it ignored again on the way (a wrapper, a shell started with "
            f"SIGINT ignored)? This pytest process's SIGINT handler: {signal.getsignal(signal.SIGINT)!r}. "
            f"Run log (tail):\n{tail}")
    if killed:
        # what a user does after a hard kill (README, "Running parts of it"); the resume below is still tested
        warnings.warn("the interrupted run did not exit within 300 s of SIGINT and was killed; unlocking")
        unlock = subprocess.run(_snakemake_cmd(repo, wd, "--unlock"), capture_output=True, text=True, env=env,
                                timeout=600)
        assert unlock.returncode == 0, (unlock.stdout + unlock.stderr)[-3000:]

    rerun = subprocess.run(_snakemake_cmd(repo, wd), capture_output=True, text=True, env=env, timeout=3000)
    out_b = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, out_b[-6000:]
    total_b = _job_total(out_b)
    assert 0 < total_b < total_a, f"re-run scheduled {total_b} jobs of {total_a}: it should finish the remaining ones only"

    tables_a, tables_b = _tables(wd_a), _tables(wd)
    assert tables_a.keys() == tables_b.keys()
    for rel, pa in tables_a.items():
        pb = tables_b[rel]
        if pa.read_bytes() == pb.read_bytes():
            continue
        da, db = pd.read_csv(pa), pd.read_csv(pb)
        timing = [c for c in da.columns if TIMING.search(str(c))]
        assert timing, f"{rel} differs between two runs of the same config and has no timing column"
        pd.testing.assert_frame_equal(da.drop(columns=timing), db.drop(columns=timing), check_exact=True, obj=rel)
    for pa in sorted((wd_a / "results").glob("*/claims/*.json")):
        pb = wd / pa.relative_to(wd_a)
        ca, cb = json.loads(pa.read_text()), json.loads(pb.read_text())
        if SPEED_CLAIM.search(ca["claim"]):
            continue  # a claim about speed is a measurement: its verdict may differ between runs
        ea, eb = ({e["name"]: e for e in c.get("evidence", [])} for c in (ca, cb))
        # an item measured on a clock (Evidence.clock: a time to a target, a speed-up) follows the machine's load
        # and its verdict may differ between two runs of the same code; the items beside it may not
        timed = {n for n, e in (ea | eb).items() if e["clock"]}
        assert ea.keys() - timed == eb.keys() - timed, pa.name
        for n in ea.keys() - timed:
            # the same tables (checked above) must give the same margin, sd and verdict
            assert [repr(ea[n][k]) for k in ("verdict", "margin", "sd")] == \
                [repr(eb[n][k]) for k in ("verdict", "margin", "sd")], f"{pa.name}: {n}"
        if not timed:
            assert (ca["verdict"], ca["holds"]) == (cb["verdict"], cb["holds"]), pa.name


def _jobs_by_rule(output: str) -> dict[str, int]:
    block = output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", block, re.M)}


def test_adding_a_seed_schedules_only_the_new_runs(run_a, repo, mirror, tmp_path):
    wd, _ = run_a
    cfg = __import__("yaml").safe_load((repo / "config" / "smoke.yaml").read_text())
    if not cfg.get("sgnht", {}).get("activate"):
        pytest.skip("sgnht is not active in the smoke config")
    seeds = list(cfg["sgnht"]["seeds"])
    extra = tmp_path / "sweep.yaml"
    extra.write_text(f"sgnht:\n  seeds: {seeds + [max(seeds) + 1]}\n")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(wd), "--configfile",
           str(repo / "config" / "smoke.yaml"), str(extra), "--cores", "2", "-n"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(mirror), timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    jobs = _jobs_by_rule(out)
    # one new compute job per synthetic experiment, plus the aggregations that read every seed
    assert jobs.get("sgnht_synthetic_runs") == 3, jobs
    # no other compute job (data, or another paper's runs) is scheduled
    assert not any(r.startswith(("fetch_", "build_")) or (r.endswith("_runs") and r != "sgnht_synthetic_runs")
                   for r in jobs), jobs
