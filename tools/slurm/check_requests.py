"""Before a cluster run: would Slurm ever start every job of the pipeline?

    python tools/slurm/check_requests.py --configfile=config/paper.yaml              # against this cluster
    python tools/slurm/check_requests.py --configfile=config/smoke.yaml --cpus 2 --mem-mb 4000

Builds the DAG of every job (as `snakemake -n --forceall` would see it) with the slurm profile's
default-resources and set-resources, asks snakemake-executor-plugin-slurm for the sbatch command of
each job, and compares the CPUs and memory it requests with the largest node (from `scontrol show node`
when no --cpus / --mem-mb are given), and the job's predicted cost (its rule's cost model,
workflow/rules/common.smk "What a job costs") with its own request. Each job is placed as Slurm would place it: tasks of
--cpus-per-task CPUs, MPI tasks spread over at most --max-nodes nodes (default: the partition's node
count), --mem per node. Prints one line per distinct request with the largest predicted wall time and
peak memory of its jobs, and exits 1, naming the jobs, if any request can never be satisfied (such a
job would otherwise wait in the queue forever on a cluster whose partitions do not refuse it at
submission: EnforcePartLimits=NO, the Slurm default), or if a job's predicted peak memory or wall time
exceeds its own request or its predicted memory the largest node (Slurm would kill it), or if a job's
threads differ from the cores its cost model says it uses.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
from pipeline_dag import built_dag  # noqa: E402

PROFILE = REPO / "workflow" / "profiles" / "slurm" / "config.yaml"


def _profile_resources(profile: Path):
    cfg = yaml.safe_load(profile.read_text()) or {}
    default = cfg.get("default-resources") or {}
    if isinstance(default, list):
        default = dict(item.split("=", 1) for item in default)
    overwrite = cfg.get("set-resources") or {}
    return default, overwrite


def sbatch_requests(configfiles: list[Path], workdir: Path, profile: Path = PROFILE) -> list[dict]:
    """One row per job: rule, wildcards, the sbatch command the slurm plugin would submit, and the job's
    predicted cost (its resources cost_cpu_s and cost_mem_mb, from the rule's cost model; None when the
    rule has none) and its threads."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command

    default, overwrite = _profile_resources(profile)
    rows = []
    with built_dag(workdir, configfiles, cores=10**6, default_resources=default, overwrite_resources=overwrite) as w:
        for job in w.dag.jobs:
            if job.rule.norun:  # target rules (all, one paper's): nothing runs, nothing is submitted
                continue
            params = {"run_uuid": "check", "slurm_logfile": "check.log", "comment_str": f"rule_{job.rule.name}",
                      "account": "", "partition": "", "workdir": str(workdir)}
            res = job.resources
            rows.append({"rule": job.rule.name, "wildcards": dict(job.wildcards_dict),
                         "sbatch": get_submit_command(job, params), "threads": job.threads,
                         "cost_cpu_s": res.get("cost_cpu_s"), "cost_mem_mb": res.get("cost_mem_mb"),
                         "cost_threads": res.get("cost_threads"), "cost_wall_s": res.get("cost_wall_s"),
                         "runtime": res.get("runtime")})
    return rows


def parse_request(sbatch: str) -> dict:
    """ntasks, cpus per task, memory per node (MB) and nodes of an sbatch command line."""
    args = shlex.split(sbatch)
    out = {"ntasks": 1, "cpus_per_task": 1, "mem_mb": 0, "mem_mb_per_cpu": 0, "nodes": None}
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a.startswith("--ntasks="):
            out["ntasks"] = int(a.split("=", 1)[1])
        elif a.startswith("--cpus-per-task="):
            out["cpus_per_task"] = int(a.split("=", 1)[1])
        elif a == "--mem":
            out["mem_mb"] = int(nxt)
        elif a == "--mem-per-cpu":
            out["mem_mb_per_cpu"] = int(nxt)
        elif a.startswith("--nodes="):
            out["nodes"] = int(a.split("=", 1)[1])
    return out


def fits(req: dict, cpus: int, mem_mb: int, max_nodes: int) -> str | None:
    """None when nodes of `cpus` CPUs and `mem_mb` MB can run the request, else the reason."""
    c = req["cpus_per_task"]
    if c > cpus:
        return f"{c} CPUs per task > {cpus} CPUs per node"
    per_node = cpus // c
    nodes_needed = -(-req["ntasks"] // per_node)
    allowed = min(max_nodes, req["nodes"]) if req["nodes"] else max_nodes
    if nodes_needed > allowed:
        return (f"{req['ntasks']} tasks x {c} CPUs need {nodes_needed} nodes of {cpus} CPUs, "
                f"at most {allowed} available")
    mem_node = req["mem_mb"] or req["mem_mb_per_cpu"] * c * min(req["ntasks"], per_node)
    if mem_node > mem_mb:
        return f"{mem_node} MB per node > {mem_mb} MB"
    return None


def cluster_node(partition: str | None = None) -> tuple[int, int, int]:
    """(CPUs, memory MB) of the largest node and the node count, from scontrol."""
    try:
        out = subprocess.run(["scontrol", "show", "node", "--oneliner"], capture_output=True, text=True,
                             check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise SystemExit(f"check_requests: cannot ask Slurm for its nodes ({e}); give --cpus and --mem-mb")
    nodes = []
    for line in out.splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if partition and partition not in kv.get("Partitions", "").split(","):
            continue
        if "CPUTot" in kv and "RealMemory" in kv:
            nodes.append((int(kv["CPUTot"]), int(kv["RealMemory"])))
    if not nodes:
        raise SystemExit(f"check_requests: scontrol shows no node{' in partition ' + partition if partition else ''}")
    return max(c for c, _ in nodes), max(m for _, m in nodes), len(nodes)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configfile", action="append", type=Path, required=True)
    p.add_argument("--workdir", type=Path, default=REPO)
    p.add_argument("--profile", type=Path, default=PROFILE, help="profile config.yaml (default: the slurm profile)")
    p.add_argument("--cpus", type=int, help="CPUs of the largest node (default: from scontrol)")
    p.add_argument("--mem-mb", type=int, help="memory of the largest node, MB (default: from scontrol)")
    p.add_argument("--max-nodes", type=int, help="nodes one job may span (default: the partition's nodes)")
    p.add_argument("--partition", help="only nodes of this partition (with scontrol)")
    a = p.parse_args(argv)
    for f in a.configfile:
        if not f.is_file():
            p.error(f"no such config file: {f}")
    if a.cpus is None or a.mem_mb is None:
        cpus, mem, n = cluster_node(a.partition)
        a.cpus = a.cpus or cpus
        a.mem_mb = a.mem_mb or mem
        a.max_nodes = a.max_nodes or n
    a.max_nodes = a.max_nodes or 1
    if a.cpus < 1 or a.mem_mb < 1 or a.max_nodes < 1:
        p.error("--cpus, --mem-mb and --max-nodes must be positive")
    rows = sbatch_requests([f.resolve() for f in a.configfile], a.workdir.resolve(), a.profile)
    groups, bad = {}, []
    for r in rows:
        req = parse_request(r["sbatch"])
        problems = [p for p in (fits(req, a.cpus, a.mem_mb, a.max_nodes), *prediction_problems(r, req, a.mem_mb)) if p]
        for why in problems:
            bad.append(f"{r['rule']} {r['wildcards']}: {why}")
        key = (r["rule"], tuple(sorted(req.items())), r["runtime"])
        g = groups.setdefault(key, {"req": req, "runtime": r["runtime"], "n": 0, "cpu": None, "mem": None, "why": []})
        g["n"] += 1
        g["why"] += [w for w in problems if w not in g["why"]]
        if r["cost_cpu_s"] is not None:
            g["cpu"] = max(g["cpu"] or 0, _wall_s(r))
            g["mem"] = max(g["mem"] or 0, r["cost_mem_mb"])
    for (rule, _, _), g in sorted(groups.items(), key=lambda kv: kv[0][0]):
        req = g["req"]
        pred = (f"predicted <= {g['cpu'] / 60:.1f} min, {g['mem']:.0f} MB" if g["cpu"] is not None
                else "no cost model")
        print(f"{'NEVER' if g['why'] else 'ok':5} {rule} ({g['n']} job{'s' if g['n'] > 1 else ''}): "
              f"--ntasks={req['ntasks']} --cpus-per-task={req['cpus_per_task']} --mem={req['mem_mb'] or '-'} "
              f"--mem-per-cpu={req['mem_mb_per_cpu'] or '-'} --time={g['runtime']}; {pred}"
              + (f"  ({'; '.join(g['why'])})" if g["why"] else ""))
    print(f"{len(rows)} jobs, {len(groups)} distinct requests; nodes of {a.cpus} CPUs and {a.mem_mb} MB, "
          f"at most {a.max_nodes} per job")
    if bad:
        print("check_requests: error: these jobs would never start (they would pend forever) or would be killed "
              "by their own request:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


def _wall_s(row: dict) -> float:
    """Predicted wall time (s) of a job: its model's, else CPU time over threads."""
    w = row.get("cost_wall_s")
    return float(w) if w is not None else row["cost_cpu_s"] / max(1, row["threads"])


def prediction_problems(row: dict, req: dict, node_mem_mb: int) -> list[str]:
    """Where a job's predicted cost (its rule's cost model) exceeds its own request or the largest node:
    peak memory above --mem (per node) or the node's memory, wall time (CPU time / threads) above --time."""
    if row.get("cost_cpu_s") is None:
        return []
    out = []
    mem_req = req["mem_mb"] or req["mem_mb_per_cpu"] * req["cpus_per_task"] * req["ntasks"]
    if mem_req and row["cost_mem_mb"] > mem_req:
        out.append(f"predicted peak {row['cost_mem_mb']} MB > its request --mem={mem_req}")
    if row["cost_mem_mb"] > node_mem_mb:
        out.append(f"predicted peak {row['cost_mem_mb']} MB > {node_mem_mb} MB per node")
    wall_min = _wall_s(row) / 60
    if row["runtime"] is not None and wall_min > float(row["runtime"]):
        out.append(f"predicted {wall_min:.0f} min > its request --time={row['runtime']}")
    if row.get("cost_threads") is not None and int(row["cost_threads"]) != int(row["threads"]):
        out.append(f"asks for {row['threads']} threads but its cost model says it uses {row['cost_threads']}")
    return out


if __name__ == "__main__":
    sys.exit(main())
