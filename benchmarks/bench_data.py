"""Time the data stage: 20 Newsgroups bydate text -> tf-idf (fetch from the mirror, parse, count,
weight), and the whole `snakemake data` target at quick scale in a scratch directory.

    .venv/bin/python benchmarks/bench_data.py [--mirror ../shared/data] [--skip-dag]

Prints wall and CPU seconds per step; the project's targets are 60 s for 20NG -> tf-idf and 3 minutes for
all processed corpora at quick scale on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def step(name, fn, rows):
    t0, c0 = time.perf_counter(), cpu()
    out = fn()
    rows.append((name, time.perf_counter() - t0, cpu() - c0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=os.environ.get("SCALABLE_BAYES_MIRROR", str(REPO.parent / "shared" / "data")))
    ap.add_argument("--skip-dag", action="store_true")
    args = ap.parse_args()

    from scalable_bayes.corpora import save_corpus
    from scalable_bayes.corpora.build import build_corpus, news20_messages
    from scalable_bayes.corpora.fetch import fetch_source

    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        raw = {"20news_bydate": step("fetch 20news_bydate (mirror, verify, extract)",
                                     lambda: fetch_source("20news_bydate", tmp / "raw", mirror=args.mirror), rows)}
        msgs = step("parse 18,846 messages, strip headers", lambda: news20_messages(raw), rows)
        msgs.to_parquet(tmp / "m.parquet")
        corpus = step("news20: dedup, count, filter, tf-idf", lambda: build_corpus("news20", {"news20_messages": tmp / "m.parquet"}), rows)
        step("write corpus", lambda: save_corpus(corpus, tmp / "news20"), rows)
        total = sum(r[1] for r in rows)
        rows.append(("20NG bydate text -> tf-idf, total", total, sum(r[2] for r in rows)))

        if not args.skip_dag:
            wd = tmp / "dag"
            wd.mkdir()
            (wd / "config").symlink_to(REPO / "config")
            env = dict(os.environ, SCALABLE_BAYES_MIRROR=args.mirror)
            cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(wd), "--cores", "2", "data"]
            step("snakemake --cores 2 data (quick scale: fetch + all 12 corpora + table)",
                 lambda: subprocess.run(cmd, check=True, env=env, capture_output=True), rows)

    print(f"{'step':<75} {'wall s':>8} {'cpu s':>8}")
    for name, wall, c in rows:
        print(f"{name:<75} {wall:8.1f} {c:8.1f}")
    print(f"load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
