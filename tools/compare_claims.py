"""Verdicts of two runs side by side: does each claim's verdict replicate, and does each run's sd cover the
difference between the two runs?

    python tools/compare_claims.py RUN_A RUN_B                    # the table on the terminal
    python tools/compare_claims.py . ../replication --markdown results/replication.md

RUN is a run directory holding ``results/<paper>/claims/<id>.json`` (or that ``results`` directory); the
usual pair is the default run and its replication (``config/replication.yaml``: every seed moved by
``seed_offset``; README.md "Replicating the verdicts"). Per claim: the verdict in A and in B and the change
(hard flip: holds <-> fails; soft flip: any other change; a claim one run lacks); per evidence item: its
margin in A and B, the sd each run measured, and the sd estimated from the two margins alone
(|A - B| / sqrt 2), flagged when the two margins differ by more than 2 sqrt(sd_A^2 + sd_B^2). The logic is
``scalable_bayes.reporting.compare_claim_runs``.

Exit status: 0 when every claim has the same verdict in both runs, 1 when a verdict differs (a flip, or a
claim one run lacks), 2 on bad input (a missing directory, no claim files, an unreadable claim file).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_a", type=Path, help="run directory (or its results/) of run A")
    p.add_argument("run_b", type=Path, help="run directory (or its results/) of run B")
    p.add_argument("--markdown", type=Path, metavar="OUT", help="also write the table as markdown to OUT")
    args = p.parse_args(argv)
    from scalable_bayes.reporting import ClaimRunError, compare_claim_runs, comparison_markdown, comparison_summary
    from scalable_bayes.utils import write_text_atomic

    try:
        df = compare_claim_runs(args.run_a, args.run_b)
    except ClaimRunError as err:
        print(f"compare_claims: error: {err}", file=sys.stderr)
        return 2
    text = comparison_markdown(df, str(args.run_a), str(args.run_b))
    print(text)
    if args.markdown:
        write_text_atomic(args.markdown, text + "\n")
    return 1 if comparison_summary(df)["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
