# Claims table and HTML report.


rule claims:
    conda:
        CONDA_ENV
    input:
        claim_targets(),
    output:
        report("results/claims.md", caption="../report/claims.rst", category="claims"),
    params:
        profile=PROFILE,
    log:
        "logs/report/claims.log",
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/collect_claims.py"
