"""What a job costs and what it asks for: every job has a cost model, its requests cover the prediction,
and the estimate of a config adds up.

The cost models live in the rule files (``workflow/rules/common.smk`` "What a job costs", one model per
compute rule in ``workflow/rules/functions/<paper>.smk``); ``tools/estimate.py`` sums them and
``tools/slurm/check_requests.py`` compares them with the requests and a node. DAGs are built in fresh
processes (Snakemake keeps global state).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ESTIMATE = REPO / "tools" / "estimate.py"
CHECK = REPO / "tools" / "slurm" / "check_requests.py"
sys.path[:0] = [str(REPO / "tools"), str(CHECK.parent)]
import check_requests as cr  # noqa: E402
import estimate  # noqa: E402


def _run(args, cwd=REPO, timeout=600):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _job(i, cpu, threads=1, deps=()):
    return {"id": i, "cpu_s": float(cpu), "threads": threads, "deps": list(deps)}


def test_wall_time_of_a_small_dag():
    """A chain a -> b (10 s each) beside an independent c (20 s): 40 s on one core, 20 s on two (the chain
    and c side by side); a 2-thread job of 20 CPU seconds takes 10 s on two cores, 20 s on one."""
    rows = [_job(0, 10), _job(1, 10, deps=[0]), _job(2, 20)]
    assert estimate.wall_time(rows, 1) == pytest.approx(40)
    assert estimate.wall_time(rows, 2) == pytest.approx(20)
    assert estimate.wall_time(rows, 8) == pytest.approx(20)
    two = [_job(0, 20, threads=2)]
    assert estimate.wall_time(two, 2) == pytest.approx(10)
    assert estimate.wall_time(two, 1) == pytest.approx(20)


def test_wall_time_puts_the_longest_chain_first():
    """On two cores: a 30 s job waiting for a 10 s one, and two free 20 s jobs. Starting the chain first
    ends at 40 s; starting the two free jobs first would end at 60 s."""
    rows = [_job(0, 10), _job(1, 30, deps=[0]), _job(2, 20), _job(3, 20)]
    assert estimate.wall_time(rows, 2) == pytest.approx(40)


def test_a_cycle_is_refused():
    with pytest.raises(SystemExit, match="cycle"):
        estimate.wall_time([_job(0, 1, deps=[1]), _job(1, 1, deps=[0])], 1)


@pytest.mark.parametrize("configfile", ["smoke.yaml", "config.yaml", "paper.yaml"])
def test_every_request_covers_its_prediction_on_a_node_of_this_machine(configfile, tmp_path):
    """check_requests.py on a node of this machine's size (2 CPUs would refuse the 2-thread jobs' siblings
    of more threads, so 64 CPUs; 24 GB): every job has a cost model, no prediction exceeds its own request
    or the node (the paper profile's CVB0 at K = 1000 included)."""
    (tmp_path / "config").symlink_to(REPO / "config")
    out = _run([CHECK, "--configfile", REPO / "config" / configfile, "--workdir", tmp_path, "--cpus", "64",
                "--mem-mb", "24000", "--max-nodes", "1"])
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "no cost model" not in out.stdout
    assert re.search(r"^ok +esca_lda_runs \(\d+ jobs?\): .*predicted <= [\d.]+ min, \d+ MB", out.stdout, re.M)


def test_check_requests_names_a_prediction_above_its_request():
    """A job predicted to need more memory or time than it asks for is named (Slurm would kill it)."""
    req = cr.parse_request("sbatch --mem 4000 --cpus-per-task=2")
    row = {"cost_cpu_s": 6000, "cost_mem_mb": 5000, "threads": 2, "runtime": 30}
    problems = cr.prediction_problems(row, req, node_mem_mb=4500)
    assert any("5000 MB > its request --mem=4000" in p for p in problems)
    assert any("5000 MB > 4500 MB per node" in p for p in problems)
    assert any("50 min > its request --time=30" in p for p in problems)
    assert cr.prediction_problems({**row, "cost_cpu_s": 3000, "cost_mem_mb": 3000}, req, 8000) == []
    assert any("asks for 2 threads but its cost model says it uses 1" in p
               for p in cr.prediction_problems({**row, "cost_threads": 1}, req, 8000))
    assert cr.prediction_problems({**row, "cost_cpu_s": 3000, "cost_mem_mb": 3000, "cost_threads": 2}, req, 8000) == []


def test_estimate_of_the_paper_profile(tmp_path):
    """The estimate command on the paper profile: a line per paper, the longest job, the peak memory and a
    wall time per machine size that falls with more cores but not below the longest job; and the README's
    table ("What a run costs") states what the command prints today (jobs and CPU-hours per paper, the
    total, the wall times on 2 and 64 cores), so a changed cost model cannot leave it stale."""
    (tmp_path / "config").symlink_to(REPO / "config")
    out = _run([ESTIMATE, "--configfile", REPO / "config" / "paper.yaml", "--workdir", tmp_path, "--cores", "2",
                "64", "4096"])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for paper in ("esca", "sgnht", "sggmc", "scir", "vmf", "data"):
        assert re.search(rf"^{paper} +\d+ +[\d.]+ ", out.stdout, re.M), out.stdout
    total = float(re.search(r"^total +\d+ +([\d.]+)", out.stdout, re.M).group(1))
    longest = float(re.search(r"^longest job: .*, ([\d.]+) h on", out.stdout, re.M).group(1))
    walls = [float(w) for w in re.findall(r"^wall time on \d+ cores: ([\d.]+) h", out.stdout, re.M)]
    assert len(walls) == 3 and walls[0] > walls[1] >= walls[2] >= longest - 0.01
    assert walls[0] >= total / 2 - 0.01  # two cores cannot beat half the CPU time
    assert re.search(r"^peak memory: .*, [\d.]+ GB$", out.stdout, re.M)

    readme = (REPO / "README.md").read_text()
    section = readme.split("## What a run costs", 1)[1].split("\n## ", 1)[0]
    for paper, jobs, cpu_h in re.findall(r"^(\w+) +(\d+) +([\d.]+) ", out.stdout, re.M):
        name = "all" if paper == "total" else paper
        if name == "report":  # the claims job: not a row of the README's table
            continue
        row = re.search(rf"^\| {name} \| (\d+) \| ([\d.]+) \|", section, re.M)
        assert row, f"README 'What a run costs' has no row for {name}"
        assert (int(row.group(1)), float(row.group(2))) == (int(jobs), round(float(cpu_h), 1)), (name, row.group(0))
    wall2, wall64 = re.search(r"Wall time: ~([\d.]+) h on 2 cores, ~([\d.]+) h on 64", section).groups()
    assert (float(wall2), float(wall64)) == (round(walls[0]), round(walls[1], 1)), (wall2, wall64, walls)


def test_the_smoke_run_fit_its_requests(smoke_run):
    """Every job of the suite's smoke run that wrote a benchmark file used less memory and wall time than it
    asks a cluster for (estimate --measured exits 1 otherwise), and the table of measured / predicted has
    a row for the compute rules."""
    workdir, _ = smoke_run
    out = _run([ESTIMATE, "--configfile", workdir / "config" / "smoke.yaml", "--workdir", workdir,
                "--cores", "2", "--measured", workdir], cwd=workdir)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for rule in ("esca_lda_runs", "sggmc_fig5_runs", "scir_runs", "vmf_fig3_runs"):
        assert re.search(rf"^{rule} +\d+ ", out.stdout, re.M), out.stdout
