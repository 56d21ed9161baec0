"""Run one SGNHT synthetic experiment (double_well | known_variance | normal_gamma) for one seed."""

from scalable_bayes.samplers import experiments as ex
from scalable_bayes.utils import save_table, setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
s = snakemake.params.settings  # noqa: F821
exp, seed = s["experiment"], s["seed"]
if exp == "double_well":
    dw = s["double_well"]
    tables = ex.run_double_well(seed, dw["n_steps"], dw["step_size"], dw["B"], tuple(dw["fixed_xi"]), dw["burnin"])
else:
    g = s["gaussian"]
    grid = [(float(h), float(A)) for h in g["step_sizes"] for A in g["frictions"]]
    run = ex.run_known_variance if exp == "known_variance" else ex.run_normal_gamma
    tables = run(seed, s["data_seed"], grid, g["n_steps"], g["batch_size"], g["n_data"], g["burnin"])
for df, path in zip(tables, [snakemake.output.summary, snakemake.output.density, snakemake.output.traces]):  # noqa: F821
    save_table(df, path)
