# scalable_bayes: one pipeline reproducing every figure and table of five papers.
#   snakemake --cores 2                                   # default: quick scale, everything
#   snakemake --cores 2 --configfile=config/paper.yaml    # paper scale
#   snakemake --cores 2 vmf                               # one paper
# See README.md and config/README.md.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# The default config is the workflow's own (beside this file), also when the run has a directory of its own
# (--directory=DIR: a replication, README.md "Replicating the verdicts"); --configfile files merge over it.
configfile: str(Path(workflow.basedir) / "config" / "config.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"


# One rule file per paper; each registers its targets in PAPER_TARGETS.
for _paper in PAPERS:
    if (Path(workflow.basedir) / "workflow" / "rules" / f"{_paper}.smk").exists():

        include: f"workflow/rules/{_paper}.smk"


include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(),


# `snakemake <paper>` builds one paper's figures and tables (whether or not it is activated);
# `snakemake data` builds the corpora and the dataset table.
# (A paper file may define its own rule of that name; then that one is used.)
for _name in [n for n in ["data"] + PAPERS if n in PAPER_TARGETS and n not in {r.name for r in workflow.rules}]:

    rule:
        name:
            _name
        input:
            PAPER_TARGETS[_name](),
