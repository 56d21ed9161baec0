"""Rule claims: results/*/claims/*.json -> results/claims.md."""
from scalable_bayes.reporting import collect_claims
from scalable_bayes.utils import setup_logging

setup_logging(snakemake.log[0])
collect_claims(list(snakemake.input.claims), snakemake.output[0], snakemake.params.profile)
