"""Structure of the Snakemake rules (read from the rule files, nothing runs):

* every rule whose script imports a paper's ``figures``, ``claims`` or ``tables`` module takes those
  modules as inputs (``paper_code(<paper>, ...)``), so that editing a figure or a claim check re-runs the
  rules that use it, and only them; no claim goes stale;
* compute rules (outputs under ``results/<paper>/runs/``) take none of them: changing a colour or a
  threshold re-runs no sampler.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER_IMPORT = re.compile(r"from scalable_bayes_papers\.(\w+)(?:\.(\w+))? import ([\w, ]+)")


def _rule_blocks(path: Path):
    text = path.read_text()
    starts = [m.start() for m in re.finditer(r"^rule (\w+):", text, re.M)] + [len(text)]
    for a, b in zip(starts, starts[1:]):
        block = text[a:b]
        yield re.match(r"rule (\w+):", block).group(1), block


def _paper_modules(script: Path) -> set[tuple[str, str]]:
    """(paper, module) pairs among figures / claims / tables that a script imports."""
    out = set()
    for paper, sub, names in PAPER_IMPORT.findall(script.read_text()):
        mods = [sub] if sub else [n.strip() for n in names.split(",")]
        out |= {(paper, m) for m in mods if m in {"figures", "claims", "tables"}}
    return out


def _script_rules():
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            m = re.search(r'script:\s*\n\s*"\.\./scripts/([\w.]+)"', block)
            if m:
                yield smk, name, block, ROOT / "workflow" / "scripts" / m.group(1)


def test_figure_and_table_rules_take_their_paper_modules_as_inputs():
    checked, missing = 0, []
    for smk, name, block, script in _script_rules():
        for paper, module in _paper_modules(script):
            checked += 1
            m = re.search(rf'paper_code\(\s*"{paper}"((?:\s*,\s*"\w+")+)\s*\)', block)
            declared = set(re.findall(r'"(\w+)"', m.group(1))) if m else set()
            if module not in declared:
                missing.append(f"{smk.name}:{name} uses {paper}.{module}")
    assert checked > 15, checked
    assert not missing, "rules without paper_code(<paper>, <module>) as an input:\n" + "\n".join(missing)


def test_compute_rules_do_not_depend_on_figures_or_claims():
    bad = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            output = block.split("output:", 1)[1].split("\n    log:", 1)[0] if "output:" in block else ""
            if "/runs/" in output and "paper_code(" in block:
                bad.append(f"{smk.name}:{name}")
    assert not bad, "compute rules must not take figures/claims code as input: " + ", ".join(bad)


def test_no_rule_uses_the_old_plotting_modules():
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        assert "plotting_code(" not in smk.read_text(), smk.name


def test_every_figure_rule_declares_its_pdf():
    """``savefig`` writes the PDF beside every PNG; a rule that declared only the PNG left the PDF behind when
    the job failed after the figure was written (Snakemake removes declared outputs only)."""
    missing = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, block in _rule_blocks(smk):
            out = block.split("output:", 1)[1] if "output:" in block else ""
            out = re.split(r"^\s{4}\w+:\s*$", out, maxsplit=1, flags=re.M)[0]  # up to the next directive
            for png in re.findall(r'"(results/[^"]+)\.png"', out):
                if f'"{png}.pdf"' not in out:
                    missing.append(f"{smk.name}: rule {name} declares {png}.png but not {png}.pdf")
    assert not missing, "\n".join(missing)
