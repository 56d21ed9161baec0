#!/usr/bin/env bash
# Run by Snakemake once inside the environment it creates from pipeline.yaml (--use-conda), from
# the working directory (the project root): install the scalable_bayes library into it.
set -euo pipefail
python -m pip install --no-deps -e "${SCALABLE_BAYES_ROOT:-$PWD}"
