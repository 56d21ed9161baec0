"""The README's example commands do what they say.

``--configfile`` and ``--forcerun`` take several values, so in ``./reproduce --configfile config/paper.yaml
results/vmf/figures/Fig2.png`` Snakemake reads the target as a second config file, and after ``--forcerun
<rule> <target>`` it builds ``all``. Every ``./reproduce ...`` command of README.md (code spans in its
tables, lines of its code blocks) is parsed with Snakemake's own argument parser: its targets must be the
targets it names and its config files YAML files; the commands that schedule work are dry-run (``snakemake
-n`` in a scratch directory that sees the repository's config, profiles and workflow) and must schedule the
rule or file they name.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RULE_TARGETS = {"vmf", "sgnht", "sggmc", "scir", "esca", "data"}
# The README's sweep example names a file of the reader's; its content is the README's example.
SWEEP_FILE = "my_sweep.yaml", "sgnht: {seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}\n"
# Commands that are parsed but not dry-run, and why.
NOT_DRY_RUN = {
    "--report": "writes the HTML report of a finished run; a dry run of it checks nothing",
    "--profile": "the Slurm profile submits through a cluster (tests/test_slurm.py runs it against one)",
    "--unlock": "acts on the working directory's lock, schedules nothing",
    "--list-rules": "lists rules, schedules nothing",
}
# Whole-DAG dry runs (10-20 s each on a loaded 2-core machine) run only with the slow tests.
WHOLE_DAG = {"./reproduce", "./reproduce -n", "./reproduce --configfile=config/paper.yaml",
             "./reproduce --configfile=config/smoke.yaml", "./reproduce --forcerun=sgnht_fig1",
             "./reproduce --directory=../replication --configfile=config/replication.yaml"}


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    cmds = []
    for line in text.splitlines():
        if line.startswith("|"):
            cmds += [c.strip() for c in re.findall(r"`(\./reproduce(?: [^`]*)?)`", line)]
    for block in re.findall(r"```(?:bash|sh)?\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("./reproduce"):
                cmds.append(line)
    return list(dict.fromkeys(cmds))


def test_the_readme_has_example_commands():
    cmds = readme_commands()
    assert len(cmds) >= 10, cmds
    assert any("--configfile=config/paper.yaml" in c for c in cmds)


ONE_VALUE = {"--report", "--profile", "--cores", "-c", "--jobs", "-j"}  # options that take exactly one value


def _named_targets(args: list[str]) -> list[str]:
    """The targets a command names: paths under results/ or data/ and the paper rules, not an option's value."""
    return [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in ONE_VALUE)
            and (a.startswith(("results/", "data/")) or a in RULE_TARGETS)]


@pytest.mark.parametrize("cmd", readme_commands())
def test_readme_command_parses_as_written(cmd):
    from snakemake.cli import get_argument_parser

    args = shlex.split(cmd)[1:]
    parsed = get_argument_parser().parse_args(args)
    assert list(parsed.targets) == _named_targets(args), \
        f"{cmd!r}: Snakemake reads the targets {parsed.targets!r}; put the targets first or write --option=VALUE"
    for f in parsed.configfile or []:
        assert str(f).endswith((".yaml", ".yml")), f"{cmd!r}: {f} is read as a config file"
        assert (REPO / f).is_file() or Path(f).name == SWEEP_FILE[0], f"{cmd!r}: no config file {f}"
    for r in parsed.forcerun or []:
        assert "/" not in r and "." not in r, f"{cmd!r}: {r!r} is read as a rule to force"


def _dry_run_params():
    out = []
    for cmd in readme_commands():
        skip = next((why for opt, why in NOT_DRY_RUN.items() if opt in shlex.split(cmd)
                     or any(a.startswith(opt + "=") for a in shlex.split(cmd))), None)
        marks = [pytest.mark.skip(reason=f"not dry-run: {skip}")] if skip else []
        if cmd in WHOLE_DAG:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(cmd, marks=marks, id=cmd))
    return out


@pytest.mark.parametrize("cmd", _dry_run_params())
def test_readme_command_dry_run_schedules_what_it_names(cmd, tmp_path):
    for name in ("config", "profiles", "workflow"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / SWEEP_FILE[0]).write_text(SWEEP_FILE[1])
    args = [a for a in shlex.split(cmd)[1:] if a != "-n"]
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "1",
                           "-n", "--quiet=progress", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{cmd!r}:\n{out[-3000:]}"
    rules = set(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):", out, re.M))
    targets = _named_targets(args)
    for t in targets:
        if t in RULE_TARGETS:
            assert t in rules, f"{cmd!r} does not schedule rule {t}: {sorted(rules)}"
        else:
            # a job lists its outputs, or (rules with a message) the reason naming them
            assert re.search(rf"(output: |Missing output files: ).*{re.escape(t)}", out), f"{cmd!r} does not schedule {t}"
    if targets:
        assert "all" not in rules, f"{cmd!r} schedules rule all: a target was read as an option's value"
    else:
        assert "all" in rules, f"{cmd!r}: {sorted(rules)}"
    for i, a in enumerate(args):
        if a.startswith("--forcerun="):
            assert a.split("=", 1)[1] in rules


def test_reproduce_refuses_a_target_after_configfile():
    """The mistake the README warns of stops before anything runs, naming the fix."""
    proc = subprocess.run([str(REPO / "reproduce"), "--configfile", "config/paper.yaml",
                           "results/vmf/figures/Fig2.png"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--configfile=FILE" in proc.stderr and "results/vmf/figures/Fig2.png" in proc.stderr
