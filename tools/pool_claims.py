"""Claims whose run has one seed, re-checked on the run tables of two runs pooled: a verdict with a spread.

    python tools/pool_claims.py RUN_A RUN_B                     # default run and its replication
    python tools/pool_claims.py . ../replication --markdown results/pooled.md

Some claims need the spread between seeds and the quick profile runs them with one seed (the SGNHT machine-
learning applications: Fig. 3's rows, STab2, STab3; ESCA Fig. 2, Fig. 6 and the throughput table), so within one
run they are "not checked".
A second run with every seed moved (``config/replication.yaml``, README.md "Replicating the verdicts") gives
each of them a second, independent seed. This command concatenates the two runs' run tables of these items
(keeping, in each run, only the seeds its config names) and hands them to the same check the pipeline uses,
as if one run had both seed sets; it prints, per claim, the verdict of each run alone and of the pool, with
the pooled evidence. Two seeds give each sd one degree of freedom: a band of 13.97 sds (Student's t), so a
pooled verdict is decided only by a large effect or by seeds that agree exactly.

RUN_A and RUN_B are run directories (holding ``results/``); ``--configfile-a`` / ``--configfile-b`` are the
config files each ran with, merged over ``config/config.yaml`` as Snakemake merges them (defaults: none for
A, ``config/replication.yaml`` for B). Exit status: 0 on success, 2 on bad input (a missing run table).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_config(configfiles: list[Path]) -> dict:
    """The validated config of a run (``config/config.yaml`` with ``configfiles`` merged over it), every seed
    moved by its ``seed_offset``, as ``workflow/rules/common.smk`` builds it."""
    import yaml
    from snakemake.utils import update_config

    from scalable_bayes_papers.config import apply_seed_offset, validate_config

    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for f in configfiles:
        update_config(cfg, yaml.safe_load(Path(f).read_text()) or {})
    return apply_seed_offset(validate_config(cfg, REPO / "workflow" / "schemas"))


class PoolError(Exception):
    """A run table the pooled check needs is missing."""


def _read(paths: list[Path]):
    import pandas as pd

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise PoolError(f"{len(missing)} run table(s) missing, first {missing[0]}: did the run finish?")
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def sgnht_ml_tables(run: Path, ml: dict):
    """(summary, trace) of the SGNHT ML runs of ``run`` for the tasks and seeds of its config block ``ml``."""
    base = run / "results" / "sgnht" / "runs" / "ml"
    cells = [base / t / f"seed{s}" for t in ml["tasks"] for s in ml["seeds"]]
    return _read([c / "summary.parquet" for c in cells]), _read([c / "trace.parquet" for c in cells])


def esca_fig6_table(run: Path, fig6: dict):
    """Run table of ESCA Fig. 6 of ``run``: every run file of the seeds its config names."""
    base = run / "results" / "esca" / "runs" / "fig6"
    seeds = {f"seed{s}.parquet" for s in fig6["seeds"]}
    paths = sorted(p for p in base.glob("*/*/seed*.parquet") if p.name in seeds)
    if not paths:
        raise PoolError(f"no ESCA Fig. 6 run tables of seeds {sorted(fig6['seeds'])} under {base}")
    return _read(paths)


def esca_fig2_table(run: Path, esca: dict):
    """Run table of ESCA Fig. 2 of ``run``: its corpora x engines x the seeds its config names."""
    from scalable_bayes_papers.esca import layout

    return _read([run / p for p in layout.fig2_run_paths(esca)])


def esca_throughput_runs(run: Path, esca: dict):
    """Run tables of the ESCA throughput table of ``run``, as rule ``esca_throughput`` reads them; the MPI rows
    are left out (no claim rests on them)."""
    from scalable_bayes_papers.esca import layout

    return _read([run / p for p in layout.throughput_run_paths(esca)])


def pooled_claims(run_a: Path, run_b: Path, cfg_a: dict, cfg_b: dict) -> list[dict]:
    """Per pooled claim: its id, the verdict of each run (from its claim file) and the pooled claim."""
    import pandas as pd

    from scalable_bayes_papers.esca import claims as esca_claims
    from scalable_bayes_papers.esca import tables as esca_tables
    from scalable_bayes_papers.sgnht import claims as sgnht_claims
    from scalable_bayes_papers.sgnht import tables as sgnht_tables

    pooled = []
    ml_a, ml_b = cfg_a["sgnht"]["ml"], cfg_b["sgnht"]["ml"]
    if all(c["sgnht"]["activate"] and c["sgnht"]["ml"]["activate"] for c in (cfg_a, cfg_b)):
        (sa, ta), (sb, tb) = sgnht_ml_tables(run_a, ml_a), sgnht_ml_tables(run_b, ml_b)
        summary, trace = pd.concat([sa, sb], ignore_index=True), pd.concat([ta, tb], ignore_index=True)
        ml = {**ml_a, "seeds": sorted(set(ml_a["seeds"]) | set(ml_b["seeds"]))}
        profile = cfg_a["profile"]
        pooled += [(c.id, "sgnht", c) for c in sgnht_claims.check_fig3(summary, ml, profile)]
        pooled.append(("SGNHT-STab2", "sgnht",
                       sgnht_claims.check_stab2(sgnht_tables.stab2(summary), summary, ml, profile, trace)))
        pooled.append(("SGNHT-STab3", "sgnht",
                       sgnht_claims.check_stab3(sgnht_tables.stab3(summary), summary, ml, profile)))
    f6a, f6b = cfg_a["esca"]["fig6"], cfg_b["esca"]["fig6"]
    if cfg_a["esca"]["activate"] and cfg_b["esca"]["activate"]:
        ea, eb = cfg_a["esca"], cfg_b["esca"]
        df = pd.concat([esca_fig2_table(run_a, ea), esca_fig2_table(run_b, eb)], ignore_index=True)
        pooled.append(("ESCA-Fig2", "esca", esca_claims.check_fig2(df, ea["fig2"], cfg_a["profile"])))
        tol = ea["throughput"].get("quality_tol", 0.05)
        runs = pd.concat([esca_throughput_runs(run_a, ea), esca_throughput_runs(run_b, eb)], ignore_index=True)
        pooled.append(("ESCA-Throughput", "esca", esca_claims.check_throughput(
            esca_tables.throughput(runs, quality_tol=tol), cfg_a["profile"], quality_tol=tol)))
        df = pd.concat([esca_fig6_table(run_a, f6a), esca_fig6_table(run_b, f6b)], ignore_index=True)
        settings = {**f6a, "seeds": sorted(set(f6a["seeds"]) | set(f6b["seeds"]))}
        pooled.append(("ESCA-Fig6", "esca", esca_claims.check_fig6(df, settings, cfg_a["profile"])))
    out = []
    for cid, paper, claim in pooled:
        def own(run):
            f = run / "results" / paper / "claims" / f"{cid}.json"
            return json.loads(f.read_text())["verdict"] if f.exists() else "missing"
        out.append({"id": cid, "verdict_a": own(run_a), "verdict_b": own(run_b), "pooled": claim})
    return out


def _evidence_text(claim) -> str:
    ev = getattr(claim, "evidence", None) or ()
    return "; ".join(f"{e.name}: {e.margin:.3g} ± {e.band:.2g}" + (f" (t, {e.df:.3g} df)" if e.df else "")
                     for e in ev) or (claim.note or "")[:200]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_a", type=Path, help="run directory of run A (the default run)")
    p.add_argument("run_b", type=Path, help="run directory of run B (its replication)")
    p.add_argument("--configfile-a", type=Path, nargs="*", default=[], help="config files of run A (over config.yaml)")
    p.add_argument("--configfile-b", type=Path, nargs="*", default=[REPO / "config" / "replication.yaml"],
                   help="config files of run B (over config.yaml; default config/replication.yaml)")
    p.add_argument("--markdown", type=Path, metavar="OUT", help="also write the table as markdown to OUT")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    try:
        rows = pooled_claims(args.run_a, args.run_b, load_config(args.configfile_a), load_config(args.configfile_b))
    except (PoolError, FileNotFoundError) as err:
        print(f"pool_claims: error: {err}", file=sys.stderr)
        return 2
    lines = ["| claim | run A | run B | pooled (both runs' seeds) | pooled evidence: margin ± band |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['id']} | {r['verdict_a']} | {r['verdict_b']} | {r['pooled'].verdict} | "
              f"{_evidence_text(r['pooled'])} |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.markdown:
        from scalable_bayes.utils import write_text_atomic

        write_text_atomic(args.markdown, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
