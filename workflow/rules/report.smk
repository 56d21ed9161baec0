# Claims table and HTML report.


rule claims:
    conda:
        CONDA_ENV
    input:
        claims=claim_targets(),
        code=code_inputs("collect_claims.py"),
    output:
        report("results/claims.md", caption="../report/claims.rst", category="claims"),
    params:
        profile=PROFILE,
    log:
        "logs/report/claims.log",
    resources:
        **light_resources(500, 5),
    script:
        "../scripts/collect_claims.py"
