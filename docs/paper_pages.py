"""Write one docs page per paper from the paper's own folder: the README's title and opening paragraph,
where its code, rules and README are, how to build it, and (where the claims module lists them) its claims.
Run by ``conf.py`` at every build, so the pages follow the code."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("sggmc", "sgnht", "scir", "vmf", "esca")


def _intro(readme: Path) -> tuple[str, str]:
    lines = readme.read_text(encoding="utf-8").splitlines()
    title = lines[0].lstrip("# ").strip()
    body, started = [], False
    for line in lines[1:]:
        if not line.strip():
            if started:
                break
            continue
        if line.startswith("#"):
            break
        started = True
        body.append(line)
    return title, " ".join(body)


def write(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for key in PAPERS:
        folder = ROOT / "src" / "scalable_bayes_papers" / key
        title, intro = _intro(folder / "README.md")
        claims = getattr(importlib.import_module(f"scalable_bayes_papers.{key}.claims"), "CLAIMS", None)
        parts = [f"# {title}", "", intro, "",
                 "| | |", "|---|---|",
                 f"| paper code | `src/scalable_bayes_papers/{key}/` (runs, claims, figures, tables) |",
                 f"| its README | `src/scalable_bayes_papers/{key}/README.md`: every item, its rule and function, "
                 "every choice the paper leaves open and why, the stand-in data |",
                 f"| rules | `workflow/rules/{key}.smk`, cost models in `workflow/rules/functions/{key}.smk` |",
                 f"| build it | `./reproduce {key}` (quick), `./reproduce {key} --configfile=config/paper.yaml` |",
                 ""]
        if claims:
            parts += ["## Claims checked", "", "| item | the paper's claim |", "|---|---|"]
            parts += [f"| {item} | {text.replace('|', '/')} |" for item, text in claims.items()]
            parts.append("")
        text = "\n".join(parts)
        page = out_dir / f"{key}.md"
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")
