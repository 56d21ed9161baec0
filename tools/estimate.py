"""What a config costs before it runs: CPU-hours per paper, the longest job, peak memory, wall time on N cores.

    python tools/estimate.py --configfile=config/paper.yaml                  # every job, 2 and 64 cores
    python tools/estimate.py --configfile=config/paper.yaml --cores 2 16 128 # wall time on these machines
    python tools/estimate.py --missing                                       # only what a run here would still do
    python tools/estimate.py --configfile=config/paper.yaml --measured ../run # predictions against a finished run

Every job's cost is its rule's cost model (workflow/rules/common.smk, "What a job costs"): predicted CPU
seconds on one core of the reference machine, peak memory and the cores it keeps busy; figure, table and
claims jobs count 30 s each. The wall time on N cores is a list schedule of the DAG (a job starts when its
inputs are done and its cores are free; the job with the longest chain of work after it goes first),
every job with min(threads, N) cores: a prediction for one machine of N cores or a cluster of that many
with no queueing. ``--measured`` reads the benchmark files of a finished run of the same config and
prints, per rule, measured over predicted CPU time and peak memory (the calibration check); it exits 1 if
a measured job used more memory or wall time than its request.
"""

from __future__ import annotations

import argparse
import heapq
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
from pipeline_dag import built_dag  # noqa: E402


def dag_costs(configfiles: list[Path], workdir: Path, missing: bool = False) -> list[dict]:
    """One row per job: id, rule, paper (its rule file), wildcards, threads, cpu_s, mem_mb, benchmark file,
    and the ids of the jobs it waits for."""
    rows, ids = [], {}
    with built_dag(workdir, configfiles, cores=10**6, forceall=not missing) as w:
        jobs = list(w.dag.needrun_jobs()) if missing else list(w.dag.jobs)
        jobs = [j for j in jobs if not j.rule.norun]  # target rules (all, one paper's) run nothing
        for i, job in enumerate(jobs):
            ids[job] = i
        for job in jobs:
            res = job.resources
            cpu = res.get("cost_cpu_s")
            if cpu is None:
                raise SystemExit(f"estimate: rule {job.rule.name} has no cost model (resources cost_cpu_s, "
                                 "cost_mem_mb: workflow/rules/common.smk); give it one")
            rows.append({"id": ids[job], "rule": job.rule.name, "paper": Path(job.rule.snakefile).stem,
                         "wildcards": dict(job.wildcards_dict), "threads": max(1, int(job.threads)),
                         "cpu_s": float(cpu), "mem_mb": float(res.get("cost_mem_mb") or 0),
                         "wall_s": float(res.get("cost_wall_s") or cpu / max(1, int(job.threads))),
                         "request_mem_mb": res.get("mem_mb"), "request_min": res.get("runtime"),
                         "benchmark": str(job.benchmark) if job.benchmark else None,
                         "deps": sorted(ids[d] for d in w.dag.dependencies[job] if d in ids)})
    return rows


def wall_time(rows: list[dict], cores: int) -> float:
    """Seconds to run every job on ``cores`` cores: a list schedule, longest remaining chain first."""
    n = len(rows)
    # a job's predicted wall time on its threads, stretched when the machine has fewer cores
    dur = [r.get("wall_s", r["cpu_s"] / r["threads"]) * r["threads"] / min(r["threads"], cores) for r in rows]
    need = [min(r["threads"], cores) for r in rows]
    children = defaultdict(list)
    waiting = [len(r["deps"]) for r in rows]
    for r in rows:
        for d in r["deps"]:
            children[d].append(r["id"])
    tail = [0.0] * n  # longest chain of work from the start of a job to the end of the DAG
    order = _topological(rows, children)
    for i in reversed(order):
        tail[i] = dur[i] + max((tail[c] for c in children[i]), default=0.0)
    ready = [(-tail[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    running, free, now = [], cores, 0.0
    while ready or running:
        blocked = []
        while ready:
            prio, i = heapq.heappop(ready)
            if need[i] <= free:
                free -= need[i]
                heapq.heappush(running, (now + dur[i], i))
            else:
                blocked.append((prio, i))
        for b in blocked:
            heapq.heappush(ready, b)
        now, i = heapq.heappop(running)
        free += need[i]
        for c in children[i]:
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(ready, (-tail[c], c))
    return now


def _topological(rows, children):
    indeg = [len(r["deps"]) for r in rows]
    stack = [i for i, d in enumerate(indeg) if d == 0]
    order = []
    while stack:
        i = stack.pop()
        order.append(i)
        for c in children[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                stack.append(c)
    if len(order) != len(rows):
        raise SystemExit("estimate: the DAG has a cycle")
    return order


def _label(r: dict) -> str:
    wc = ",".join(f"{k}={v}" for k, v in r["wildcards"].items())
    return f"{r['rule']}[{wc}]" if wc else r["rule"]


def summary(rows: list[dict], cores: list[int]) -> str:
    lines = [f"{'paper':8} {'jobs':>5} {'CPU-h':>7}  {'longest job':58} {'h':>5}  {'peak MB':>8}"]
    by = defaultdict(list)
    for r in rows:
        by[r["paper"]].append(r)
    for paper in sorted(by, key=lambda p: -sum(r["cpu_s"] for r in by[p])):
        rs = by[paper]
        longest = max(rs, key=lambda r: r["wall_s"])
        lines.append(f"{paper:8} {len(rs):5d} {sum(r['cpu_s'] for r in rs) / 3600:7.2f}  {_label(longest)[:58]:58} "
                     f"{longest['wall_s'] / 3600:5.2f}  {max(r['mem_mb'] for r in rs):8.0f}")
    longest = max(rows, key=lambda r: r["wall_s"])
    peak = max(rows, key=lambda r: r["mem_mb"])
    lines.append(f"{'total':8} {len(rows):5d} {sum(r['cpu_s'] for r in rows) / 3600:7.2f}")
    lines.append(f"longest job: {_label(longest)}, {longest['wall_s'] / 3600:.2f} h on "
                 f"{longest['threads']} core(s)")
    lines.append(f"peak memory: {_label(peak)}, {peak['mem_mb'] / 1000:.1f} GB")
    for n in cores:
        lines.append(f"wall time on {n} cores: {wall_time(rows, n) / 3600:.2f} h")
    return "\n".join(lines)


def measured(rows: list[dict], run_dir: Path, per_job: bool = False) -> tuple[str, list[str]]:
    """Per rule: jobs with a benchmark file in ``run_dir``, median and largest measured / predicted CPU time
    (cpu_time column) and peak memory (max_rss); and every job whose measured peak memory exceeded its
    memory request, or whose CPU time, spread over its cores as its model spreads it, its time request (on a
    cluster, Slurm would have killed it). The measured wall time is listed but not checked: on a shared
    machine it also measures the neighbours."""
    import pandas as pd

    out, over, jobs = defaultdict(list), [], []
    for r in rows:
        if not r["benchmark"] or r["cpu_s"] == 0:
            continue
        f = run_dir / r["benchmark"]
        if not f.is_file():
            continue
        b = pd.read_csv(f, sep="\t").iloc[-1]
        cpu, rss, wall = float(b["cpu_time"]), float(b["max_rss"]), float(b["s"])
        out[r["rule"]].append((cpu / r["cpu_s"], rss / max(r["mem_mb"], 1.0), cpu, rss, _label(r)))
        jobs.append(f"| {_label(r)} | {cpu:.0f} | {r['cpu_s']:.0f} | {wall:.0f} | {r['request_min']} | {rss:.0f} | "
                    f"{r['mem_mb']:.0f} | {r['request_mem_mb']} |")
        if r["request_mem_mb"] is not None and rss > r["request_mem_mb"]:
            over.append(f"{_label(r)}: peak {rss:.0f} MB > its request {r['request_mem_mb']} MB")
        # on cores of its own a job takes its CPU time spread as its model spreads it (wall / CPU predicted);
        # the measured wall time also counts its neighbours when the machine was shared, so it is not used
        own_wall = cpu * r["wall_s"] / r["cpu_s"]
        if r["request_min"] is not None and own_wall > 60 * float(r["request_min"]):
            over.append(f"{_label(r)}: {own_wall / 60:.1f} min on its own cores > its request {r['request_min']} min")
    lines = [f"{'rule':26} {'jobs':>4}  {'CPU meas/pred':>17}  {'mem meas/pred':>17}  {'max CPU s':>9} {'max MB':>7}"
             "  job of the largest CPU ratio",
             f"{'':26} {'':4}  {'median':>8} {'max':>8}  {'median':>8} {'max':>8}"]
    for rule in sorted(out):
        v = out[rule]
        c = sorted(x[0] for x in v)
        m = sorted(x[1] for x in v)
        lines.append(f"{rule:26} {len(v):4d}  {c[len(c) // 2]:8.2f} {c[-1]:8.2f}  {m[len(m) // 2]:8.2f} {m[-1]:8.2f}  "
                     f"{max(x[2] for x in v):9.0f} {max(x[3] for x in v):7.0f}  {max(v)[4]}")
    if not out:
        lines.append(f"(no benchmark file of these jobs under {run_dir})")
    if per_job and jobs:
        lines += ["", "| job | CPU s | predicted | wall s | request min | peak MB | predicted | request MB |",
                  "|---|---|---|---|---|---|---|---|", *sorted(jobs)]
    return "\n".join(lines), over


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configfile", action="append", type=Path, default=[],
                   help="config file(s) on top of config/config.yaml, as for ./reproduce (default: none)")
    p.add_argument("--workdir", type=Path, default=REPO)
    p.add_argument("--cores", type=int, nargs="+", default=[2, 64], help="machines to predict the wall time of")
    p.add_argument("--missing", action="store_true", help="only the jobs a run in --workdir would still do")
    p.add_argument("--measured", type=Path, help="a finished run's directory: compare its benchmark files")
    p.add_argument("--jobs", action="store_true", help="with --measured: also a Markdown table of every job")
    a = p.parse_args(argv)
    for f in a.configfile:
        if not f.is_file():
            p.error(f"no such config file: {f}")
    if any(n < 1 for n in a.cores):
        p.error("--cores must be positive")
    rows = dag_costs([f.resolve() for f in a.configfile], a.workdir.resolve(), a.missing)
    if not rows:
        print("nothing to do")
        return 0
    print(summary(rows, a.cores))
    if a.measured:
        text, over = measured(rows, a.measured.resolve(), a.jobs)
        print()
        print(text)
        if over:
            print("estimate: error: measured jobs above their requests (a cluster would have killed them):\n  "
                  + "\n  ".join(over), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
