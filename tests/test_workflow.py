"""Structure of the Snakemake rules: every rule whose script draws with a paper's plotting module
takes that module as an input, so that editing a plot re-runs the plot rules (and only them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rule_blocks(path: Path):
    text = path.read_text()
    starts = [m.start() for m in re.finditer(r"^rule (\w+):", text, re.M)] + [len(text)]
    for a, b in zip(starts, starts[1:]):
        block = text[a:b]
        yield re.match(r"rule (\w+):", block).group(1), block


def test_plot_rules_depend_on_their_plotting_module():
    checked, missing = 0, []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            m = re.search(r'script:\s*\n\s*"\.\./scripts/([\w.]+)"', block)
            if not m:
                continue
            src = (ROOT / "workflow" / "scripts" / m.group(1)).read_text()
            papers = set(re.findall(r"scalable_bayes\.plotting(?: import (\w+)|\.(\w+))", src))
            for paper in {p for pair in papers for p in pair if p and p not in ("style",)}:
                checked += 1
                if f'plotting_code("{paper}")' not in block:
                    missing.append(f"{smk.name}:{name} (plotting.{paper})")
    assert checked > 10, checked
    assert not missing, "plot rules without plot_code=plotting_code(<paper>) as an input: " + ", ".join(missing)
