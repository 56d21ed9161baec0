"""ESCA Fig. 5 / Fig. 6 claims: the words they test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalable_bayes.reporting import band_factor, welch_df
from scalable_bayes_papers.esca import claims


def _fig6_frame(sca_excess=0.0, sca_slowdown=3.0, seeds=(0, 1, 2), seed_sd=0.004):
    """Fig. 6 run tables of three (K, beta) cells: SCA's final perplexity ``sca_excess`` above CGS's, each seed
    of a cell scattered by ``seed_sd`` in relative excess (the seeds' spread the claim's sd measures)."""
    rng = np.random.default_rng(4)
    rows = []
    for K, b in [(100, 0.1), (20, 0.1), (100, 0.5)]:
        for s in seeds:
            jitter = rng.normal(0, seed_sd)
            for method, slow, excess in [("CGS", 1.0, 0.0), ("ESCA_plain", sca_slowdown, sca_excess + jitter),
                                         ("CVB0", 1.2, 0.0)]:
                for it in range(0, 31, 5):
                    ll = -7.0 - 1.5 * np.exp(-it / 6) - np.log1p(excess)
                    rows.append({"train_corpus": "a", "test_corpus": "b", "method": method, "n_topics": K, "beta": b,
                                 "seed": s, "iteration": it, "heldout_ll": ll, "cpu_time": 0.1 * slow * it,
                                 "wall_time": 0.12 * slow * it})
    return pd.DataFrame(rows)


FIG6 = {"rel_tol": 0.05, "run": {"n_topics": 100, "beta": 0.1}}


def test_fig6_claim_is_perplexity_only_and_reports_the_time_panel():
    slow = claims.check_fig6(_fig6_frame(0.0, sca_slowdown=3.0), FIG6, "test")
    assert slow.verdict == "holds"  # 3x slower SCA: the claim makes no timed statement (the paper's caption: "slower")
    assert "wall time" not in slow.claim.split("(")[0] and "hence slower" in slow.claim
    assert len(slow.evidence) == 3 and all("sqrt(3)" in e.sd_from for e in slow.evidence)
    tp = slow.details["a->b"]["time_panel"]
    assert tp["clock"] == "cpu_time" and tp["time_to_target_s"]["ESCA_plain"] > 2.5 * tp["time_to_target_s"]["CGS"]
    assert "time panel (K = 100, beta = 0.1, not tested)" in slow.measured
    assert claims.check_fig6(_fig6_frame(0.08), FIG6, "test").verdict == "fails"  # 8% above CGS's perplexity


def test_fig6_excess_within_its_seed_spread_of_the_tolerance_is_undecided():
    """SCA 4.8% above CGS with a seed scatter of 1%: 0.2 points inside the 5% tolerance, within two sds."""
    c = claims.check_fig6(_fig6_frame(0.048, seed_sd=0.01), FIG6, "test")
    assert c.verdict == "undecided", c.measured
    assert claims.check_fig6(_fig6_frame(0.048, seeds=(0,)), FIG6, "test").verdict == "not checked"  # one seed: no sd


def test_fig6_sd_is_the_seeds_sd_of_the_paired_excess():
    """Two seeds of one cell with relative excesses 1% and 3%: margin 5% - 2% = 0.03, sd = sd(0.01, 0.03) / sqrt(2)
    = 0.01."""
    t = _fig6_frame(0.0, seeds=(0, 1), seed_sd=0.0)
    t = t[(t.n_topics == 100) & (t.beta == 0.1)].copy()
    for s, x in ((0, 0.01), (1, 0.03)):
        sel = (t.method == "ESCA_plain") & (t.seed == s)
        t.loc[sel, "heldout_ll"] -= np.log1p(x)
    (e,) = claims.check_fig6(t, FIG6, "test").evidence
    assert e.margin == pytest.approx(0.03, abs=1e-9) and e.sd == pytest.approx(0.01, abs=1e-9)
    assert e.df == 1 and "1 df" in e.sd_from


def _fig6_cell(excesses):
    """Fig. 6 run tables of one (K, beta) cell whose seeds have the given relative excesses of SCA over CGS."""
    t = _fig6_frame(0.0, seeds=tuple(range(len(excesses))), seed_sd=0.0)
    t = t[(t.n_topics == 100) & (t.beta == 0.1)].copy()
    for s, x in enumerate(excesses):
        sel = (t.method == "ESCA_plain") & (t.seed == s)
        t.loc[sel, "heldout_ll"] -= np.log1p(x)
    return t


def test_fig6_seed_evidence_has_n_minus_1_df_and_its_verdict_follows_the_t_band():
    """Two seeds with excesses 2% and 3%: margin 5% - 2.5% = 0.025, sd = sd(0.02, 0.03) / sqrt(2) = 0.005, so the
    margin is 5 sds. That sd rests on one difference (1 df): the band is Student's t at the coverage of two normal
    sds, 13.97 sds = 0.070, and the cell is undecided (under the former 2-sd band it held). Five seeds with the same
    margin and sd (excesses 2.5% + (-2, -1, 0, 1, 2) x c): 4 df, band 2.87 sds, so the 5-sd margin holds."""
    (two,) = claims.check_fig6(_fig6_cell([0.02, 0.03]), FIG6, "test").evidence
    assert two.margin == pytest.approx(0.025, abs=1e-9) and two.sd == pytest.approx(0.005, abs=1e-9)
    assert two.df == 1 and two.band == pytest.approx(13.968 * 0.005, rel=1e-3)
    assert two.margin > 2 * two.sd and two.verdict == "undecided"
    c = 0.005 * np.sqrt(5) / np.std([-2, -1, 0, 1, 2], ddof=1)  # seeds' sd 0.005 sqrt(5): s.e. 0.005
    (five,) = claims.check_fig6(_fig6_cell([0.025 + k * c for k in (-2, -1, 0, 1, 2)]), FIG6, "test").evidence
    assert five.margin == pytest.approx(0.025, abs=1e-9) and five.sd == pytest.approx(0.005, rel=1e-6)
    assert five.df == 4 and five.band == pytest.approx(band_factor(4) * five.sd) and five.verdict == "holds"


def test_fig5_claim_states_no_speed_factor_and_reports_per_seed_ratios():
    rows = []
    for method, sec in [("ESCA", 0.1), ("ESCA_plain", 0.25)]:
        for s in (0, 1, 2):
            for it in range(0, 16, 3):
                rows.append({"method": method, "seed": s, "iteration": it, "n_topics": 100, "train_corpus": "r",
                             "n_tokens": 1000, "heldout_ll": -8.0 + 0.01 * it + 0.001 * s,
                             "wall_time": sec * it * (1 + 0.1 * s)})
    c = claims.check_fig5(pd.DataFrame(rows), {}, "test")
    assert c.verdict == "holds" and "much" not in c.claim and "no speed-up factor" in c.claim
    assert c.details[100]["speedup"] == 2.5 and "per seed 2.50-2.50x" in c.measured
    rows = [dict(r, wall_time=r["wall_time"] * (3 if r["method"] == "ESCA" else 1)) for r in rows]
    assert claims.check_fig5(pd.DataFrame(rows), {}, "test").verdict == "fails"  # sparse slower: fails


def _fig5_seed_table(ll_shift=0.0, speed=2.0, seeds=(0, 1, 2, 3, 4), K=400, seed_sd=0.015, pair_sd=0.006,
                     speed_sd=0.05):
    """Fig. 5 run tables in the shape ``run_held_out_experiment`` writes, with the noise the quick run measured.

    Each seed has its own level (sd ``seed_sd`` nats/word, shared by both engines of the seed: same data, same
    start), the two engines of a seed differ by ``pair_sd`` per iteration, and the sparse engine's wall time is
    plain's / ``speed`` with a per-seed scatter of ``speed_sd`` in log. ``ll_shift`` is added to every
    sparse iteration after 0: what a sparse sampler drawing from a wrong distribution would do."""
    rng = np.random.default_rng(5)
    rows = []
    for s in seeds:
        level = rng.normal(0, seed_sd)
        r = speed * np.exp(rng.normal(0, speed_sd))
        for it in range(0, 16, 3):
            base = -8.0 + 0.3 * (1 - np.exp(-it / 4)) + level
            for method in ("ESCA", "ESCA_plain"):
                ll = base + rng.normal(0, pair_sd) + (ll_shift if method == "ESCA" and it else 0.0)
                wall = 0.5 * it * (1.0 / r if method == "ESCA" else 1.0)
                rows.append({"method": method, "seed": s, "iteration": it, "n_topics": K, "train_corpus": "r",
                             "n_tokens": 1000, "heldout_ll": ll, "wall_time": wall})
    return pd.DataFrame(rows)


def _old_fig5_same(df):
    """Today's "same perplexity" bar before the paired test: gap of the mean curves <= largest seed-pair gap."""
    d = df.groupby(["method", "iteration"])["heldout_ll"].mean().unstack(0)
    gap = float((d["ESCA"] - d["ESCA_plain"]).abs().iloc[1:].max())
    per = df.pivot_table(index="iteration", columns=["method", "seed"], values="heldout_ll")
    seeds = sorted(df["seed"].unique())
    env = max(float((per[(m, a)] - per[(m, b)]).abs().iloc[1:].max()) for m in ("ESCA", "ESCA_plain")
              for i, a in enumerate(seeds) for b in seeds[i + 1:])
    return gap <= env


def _fig5_ev(c, K=400):
    same, fast = (e for e in c.evidence if e.name.startswith(f"K={K}:"))
    return same, fast


def test_fig5_right_engines_pass_the_paired_test():
    c = claims.check_fig5(_fig5_seed_table(), {}, "test")
    assert c.verdict == "holds", c.measured
    same, fast = _fig5_ev(c)
    assert same.margin > 2 * same.sd and fast.margin > 2 * fast.sd
    assert same.margin == pytest.approx(claims.FIG5_SAME_TOL - abs(c.details[400]["ll_gap_mean"]))
    assert "sqrt(5)" in same.sd_from and "paired" in c.note


def test_fig5_sparse_sampler_with_a_shift_inside_the_envelope_fails():
    """A sparse engine 0.02 nats/word off at every iteration (e.g. sampling from a wrong conditional): the old
    bar (mean-curve gap within the largest gap between two seeds, 0.04-0.05 here) passes it; the paired
    same-seed gap (seed sd ~0.004, s.e. ~0.002) puts it 0.01 beyond the 0.01 bar of "the same": fails."""
    df = _fig5_seed_table(ll_shift=0.02)
    assert _old_fig5_same(df), "the old check must pass this wrong variant, else the test tests nothing"
    c = claims.check_fig5(df, {}, "test")
    same, _ = _fig5_ev(c)
    assert c.verdict == "fails" and same.verdict == "fails" and c.details[400]["ll_gap_mean"] > 0.015


def test_fig5_gap_or_speedup_within_the_seed_noise_is_undecided_and_a_slower_sparse_fails():
    """'Reaches it sooner': a 3% mean speed-up with a 9% per-seed scatter is within the seeds' noise: undecided
    (the old test, ratio of mean times > 1, called it faster); so is a gap of 0.008 nats/word with s.e. ~0.002
    (0.002 inside the bar). A sparse engine slower on average fails."""
    noisy = _fig5_seed_table()
    ratios = dict(zip(range(5), (1.15, 0.95, 1.10, 0.93, 1.05)))  # plain / sparse per seed: mean log +0.03, sd 0.09
    sparse = noisy.method == "ESCA"
    noisy.loc[sparse, "wall_time"] = (noisy.loc[sparse, "iteration"] * 0.5 / noisy.loc[sparse, "seed"].map(ratios))
    last = noisy[noisy.iteration == noisy.iteration.max()].groupby("method")["wall_time"].mean()
    assert last["ESCA_plain"] / last["ESCA"] > 1.0  # the old speed test passes it
    c = claims.check_fig5(noisy, {}, "test")
    assert c.verdict == "undecided" and _fig5_ev(c)[1].verdict == "undecided"
    near = claims.check_fig5(_fig5_seed_table(ll_shift=0.008), {}, "test")
    assert _fig5_ev(near)[0].verdict == "undecided", near.measured
    assert claims.check_fig5(_fig5_seed_table(speed=0.8), {}, "test").verdict == "fails"


def test_fig5_sd_is_the_seeds_sd_of_the_paired_differences():
    """Three seeds with paired mean gaps 0.001, 0.003, 0.005 and speed-ups e^0.5, e^0.6, e^0.7: margins 0.01 - 0.003
    and 0.6, sds sd(gaps) / sqrt(3) = 0.002 / sqrt(3) and 0.1 / sqrt(3), each with 2 df. One seed: not checked (no
    spread)."""
    rows = []
    for s, (g, ls) in enumerate([(0.001, 0.5), (0.003, 0.6), (0.005, 0.7)]):
        for it in (0, 3, 6):
            for m in ("ESCA", "ESCA_plain"):
                rows.append({"method": m, "seed": s, "iteration": it, "n_topics": 100, "train_corpus": "r",
                             "n_tokens": 10, "heldout_ll": -8.0 + 0.1 * it + (g if m == "ESCA" and it else 0.0),
                             "wall_time": it * (np.exp(-ls) if m == "ESCA" else 1.0)})
    df = pd.DataFrame(rows)
    same, fast = _fig5_ev(claims.check_fig5(df, {}, "test"), K=100)
    assert same.margin == pytest.approx(0.007) and same.sd == pytest.approx(0.002 / np.sqrt(3))
    assert fast.margin == pytest.approx(0.6) and fast.sd == pytest.approx(0.1 / np.sqrt(3))
    assert same.df == 2 and fast.df == 2 and "2 df" in same.sd_from
    assert fast.clock and not same.clock  # the speed-up is measured on a clock, the likelihood gap is not
    one = claims.check_fig5(df[df.seed == 0], {}, "test")
    assert one.verdict == "not checked" and not one.evidence and "one seed" in one.measured


# ---------------------------------------------------------------------------- Fig. 2: time to CGS's quality
def _fig2_runs(esca_final_gap=0.0, esca_sec=0.08, seeds=(0, 1, 2)):
    """Fig. 2 run tables (one corpus, single-threaded engines) in the shape ``run_lda`` writes: held-out LL
    climbing to -7.43 (CGS 30 iterations at 0.5 s, CVB0 30 at 0.45 s, ESCA 90 at ``esca_sec`` s, the quick
    run's shape); ``esca_final_gap`` is subtracted from ESCA's curve (an ESCA that converges to a worse
    model, e.g. one reading counts of the iteration before last twice: a stale-buffer bug)."""
    rng = np.random.default_rng(2)
    rows = []
    for method, n_it, tau, sec in [("CGS", 30, 4.0, 0.5), ("CVB0", 30, 4.0, 0.45), ("ESCA", 90, 9.0, esca_sec)]:
        for s in seeds:
            jitter = rng.normal(0, 0.002)
            for it in range(0, n_it + 1, 3):
                ll = -7.43 - 1.5 * np.exp(-it / tau) + jitter - (esca_final_gap if method == "ESCA" else 0.0)
                rows.append({"train_corpus": "wikipedia", "method": method, "seed": s, "iteration": it,
                             "heldout_ll": ll, "wall_time": 1.2 * sec * it, "cpu_time": sec * it, "threads": 1,
                             "n_topics": 50, "n_tokens": 10**6, "n_test_docs": 1000})
    return pd.DataFrame(rows)


def test_fig2_esca_at_cgs_quality_and_first_passes():
    c = claims.check_fig2(_fig2_runs(), {}, "test")
    assert c.verdict == "holds", c.measured
    assert len(c.evidence) == 3 and all("sqrt(3)" in e.sd_from for e in c.evidence)


def test_fig2_fails_when_esca_converges_to_a_worse_held_out_ll():
    """ESCA 0.1 nats/word below CGS at the end: it never reaches CGS's quality (within 0.05)."""
    c = claims.check_fig2(_fig2_runs(esca_final_gap=0.1), {}, "test")
    assert c.verdict == "fails" and c.details["wikipedia"]["time_to_target_s"]["ESCA"] == np.inf


def test_fig2_lead_inside_the_seeds_spread_is_undecided():
    """ESCA's iterations priced so that it reaches the target at CGS's time up to the seeds' scatter (per-seed
    time factors with sd 30%): the means put ESCA 3% ahead, which the former mean-only test called first; the
    paired log lead (about 0.03 with s.e. ~0.13) is undecided."""
    base = _fig2_runs(seeds=range(5))
    rng = np.random.default_rng(1)
    f = {s: float(np.exp(rng.normal(0, 0.3))) for s in range(5)}
    t = base.copy()
    esca = t.method == "ESCA"
    t.loc[esca, "cpu_time"] *= t.loc[esca, "seed"].map(f)
    d = t[t.method.isin(["ESCA", "CGS"])]
    target = d[(d.method == "CGS")].sort_values("iteration").groupby("seed").tail(1)["heldout_ll"].mean() - 0.01
    reach = {m: np.mean([claims._reach(d[(d.method == m) & (d.seed == s)], target, "cpu_time") for s in range(5)])
             for m in ("ESCA", "CGS")}
    t.loc[esca, "cpu_time"] *= 0.97 * reach["CGS"] / reach["ESCA"]  # mean over seeds 3% ahead of CGS
    c = claims.check_fig2(t, {}, "test")
    tt = c.details["wikipedia"]["time_to_target_s"]
    assert tt["ESCA"] < tt["CGS"], "the former mean-only test must call ESCA first here"
    (lead,) = [e for e in c.evidence if "log(CGS" in e.name]
    assert c.verdict == "undecided" and lead.verdict == "undecided"


def test_fig2_fails_when_esca_is_slower_than_cgs_to_the_target():
    """ESCA's iteration as dear as CGS's (0.5 s, e.g. the sparse path disabled) and 3x as many needed."""
    c = claims.check_fig2(_fig2_runs(esca_sec=0.5), {}, "test")
    assert c.verdict == "fails"


def test_fig2_sd_from_two_seeds_and_one_seed_not_checked():
    """Two seeds with quality margins m0, m1: the evidence is their mean with sd |m0 - m1| / 2 (= sd / sqrt(2)),
    1 df; the time-to-target leads are on a clock, the quality margins are not. One seed: no spread to
    measure, so no evidence and the claim is not checked, with the seed's margins in the note."""
    two = _fig2_runs(seeds=(0, 1))
    c = claims.check_fig2(two, {}, "test")
    q = c.details["wikipedia"]["quality_margin_per_seed"]
    (ev,) = [e for e in c.evidence if "above CGS" in e.name]
    assert ev.margin == pytest.approx((q[0] + q[1]) / 2) and ev.sd == pytest.approx(abs(q[0] - q[1]) / 2)
    assert ev.df == 1
    assert all(e.clock == ("time" in e.name) for e in c.evidence) and any(e.clock for e in c.evidence)
    one = claims.check_fig2(two[two.seed == 0], {}, "test")
    assert one.verdict == "not checked" and not one.evidence
    q0 = one.details["wikipedia"]["quality_margin_per_seed"][0]
    assert q0 == pytest.approx(q[0]) and f"quality {q0:+.4f}" in one.note and "pool_claims" in one.note


def test_log_lead_bounds_where_an_engine_never_reaches_the_target():
    assert claims.log_lead(1.0, 2.0, 5.0, 5.0) == pytest.approx(np.log(2.0))
    assert claims.log_lead(1.0, np.inf, 5.0, 4.0) == pytest.approx(np.log(4.0))  # the other ran 4 s, never got there
    assert claims.log_lead(1.0, np.inf, 5.0, 0.5) == 0.0  # it stopped before ESCA got there: undecided by this run
    assert claims.log_lead(np.inf, 1.0, 4.0, 5.0) == pytest.approx(np.log(0.25))  # ESCA still short at 4 s
    assert np.isnan(claims.log_lead(np.inf, np.inf, 1.0, 1.0))


# ---------------------------------------------------------------------------- Fig. 3: SEM against EM restarts
def _fig3_runs(sem_shift, n_seeds=20, restart_sd=0.015, sem_sd=0.03, seed=3):
    """Fig. 3 run tables (seed, method, severity, restart, iteration, test_ll) as ``run_fig3_seed`` writes them,
    with the quick run's noise: EM's k-means++ restarts scatter by ``restart_sd`` (restart spread ~0.0165 there),
    SEM's per-seed difference to EM by ``sem_sd`` (its s.e. 0.0068 over 20 seeds); ``sem_shift[s]`` is the mean
    SEM - EM at severity s."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_seeds):
        base = -6.3 + 0.05 * rng.standard_normal()
        em = [base + (0.0 if r == 0 else restart_sd * rng.standard_normal()) for r in range(3)]
        for r, v in enumerate(em):
            rows.append({"seed": s, "method": "EM", "severity": np.nan, "restart": r, "iteration": 100, "test_ll": v})
        for sev, d in sem_shift.items():
            rows.append({"seed": s, "method": "SEM", "severity": sev, "restart": -1, "iteration": 100,
                         "test_ll": em[0] + d + sem_sd * rng.standard_normal()})
    return pd.DataFrame(rows)


FIG3 = {"n_train": 10000, "n_test": 1000, "n_iter": 100}


def _centre(df, sev, mean):
    """Shift SEM's rows at ``sev`` so that the mean over seeds of SEM - EM is exactly ``mean``."""
    d = claims.fig3_final_differences(df)["sem"][sev]
    df = df.copy()
    df.loc[(df.method == "SEM") & (df.severity == sev), "test_ll"] += mean - float(d.mean())
    return df


def test_fig3_shortfall_beyond_the_spread_by_less_than_its_standard_error_is_undecided():
    """The quick run's severity 0.5: a mean 0.0016 beyond the restart spread with s.e. ~0.0068. The former test
    (mean >= -spread) failed it on a difference a fraction of its own standard error; it is undecided."""
    df = _fig3_runs({0.0: 0.0, 0.5: -0.02})
    spread = float(np.mean(claims.fig3_final_differences(df)["restart_pairs"]))
    df = _centre(df, 0.5, -spread - 0.0016)
    c = claims.check_fig3(df, FIG3, "test")
    (ev,) = [e for e in c.evidence if e.name.startswith("severity 0.5")]
    assert ev.margin == pytest.approx(-0.0016) and 0.004 < ev.sd < 0.01
    assert ev.verdict == "undecided" and c.verdict == "undecided", c.measured


def test_fig3_fails_when_sem_gets_stuck_at_a_bad_start():
    """SEM from the bad box that stays in a worse local optimum: 3.5x the restart spread short of EM (the quick
    run's severity 1), resolved by 20 seeds."""
    df = _fig3_runs({0.0: 0.0, 1.0: -0.06})
    spread = float(np.mean(claims.fig3_final_differences(df)["restart_pairs"]))
    df = _centre(df, 1.0, -3.5 * spread)
    c = claims.check_fig3(df, FIG3, "test")
    assert c.verdict == "fails" and c.details["severity"][1.0]["verdict"] == "fails"
    assert c.details["severity"][0.0]["verdict"] != "fails" and "fails" in c.measured


def test_fig3_a_few_seeds_measure_the_spread_and_one_seed_is_not_checked():
    """Five seeds: SEM stuck 0.2 short fails against the sd of its five paired margins (4 df: a band of 2.87 sds,
    Student's t). The fixture had two seeds while the band was 2 sds; with two (or three) seeds of this fixture
    the margin, -0.13 +- 0.05 (-0.16 +- 0.04), lies inside the t band of 1 (2) df, 13.97 (4.53) sds: an sd from
    so few seeds cannot decide it, so the fixture has five. One seed: no spread to measure, so not checked (the
    former test compared the single difference with the restart spread and failed it; the default config runs
    20 seeds, smoke 2)."""
    five = claims.check_fig3(_fig3_runs({0.0: 0.0, 1.0: -0.2}, n_seeds=5), FIG3, "test")
    (ev,) = [e for e in five.evidence if e.name.startswith("severity 1")]
    assert five.verdict == "fails" and ev.df == 4 and ev.verdict == "fails"
    one = claims.check_fig3(_fig3_runs({0.0: 0.0, 1.0: -0.2}, n_seeds=1), FIG3, "test")
    assert one.verdict == "not checked" and not one.evidence and "One seed" in one.note


def test_fig3_sd_is_the_seeds_sd_of_the_paired_margins():
    """Three seeds, EM restarts 0 / +0.01 / -0.01 (per-seed spread mean(0.01, 0.01, 0.02) = 0.04 / 3), SEM - EM
    = -0.01, -0.02, -0.03: margins d_s + 0.04/3, mean -0.02 + 0.04/3, sd = sd(d) / sqrt(3) = 0.01 / sqrt(3)."""
    rows = []
    for s, d in enumerate((-0.01, -0.02, -0.03)):
        for r, v in enumerate((0.0, 0.01, -0.01)):
            rows.append({"seed": s, "method": "EM", "severity": np.nan, "restart": r, "iteration": 10, "test_ll": -6 + v})
        rows.append({"seed": s, "method": "SEM", "severity": 0.0, "restart": -1, "iteration": 10, "test_ll": -6 + d})
    (ev,) = claims.check_fig3(pd.DataFrame(rows), FIG3, "test").evidence
    assert ev.margin == pytest.approx(-0.02 + 0.04 / 3) and ev.sd == pytest.approx(0.01 / np.sqrt(3))


# ---------------------------------------------------------------------------- TabU1: Ising stationary laws
def _tabu1(sync):
    p = np.exp([1.0, -1.0, -1.0, 1.0])
    p /= p.sum()
    return pd.DataFrame({"state": ["++", "+-", "-+", "--"], "p_target": p, "sequential_gibbs_stationary": p,
                         "synchronous_sca_stationary": sync(p)})


def test_tabu1_uniform_synchronous_law_passes():
    assert claims.check_tabu1(_tabu1(lambda p: np.full(4, 0.25)), "test").holds is True


@pytest.mark.parametrize("sync", [lambda p: p, lambda p: np.array([0.3, 0.2, 0.2, 0.3])],
                         ids=["synchronous_equals_target", "nearly_uniform"])
def test_tabu1_fails_when_the_synchronous_chain_is_not_uniform(sync):
    """A transition matrix built with sequential (not synchronous) updates gives p itself; a wrong cosh
    normaliser gives a law near, not at, uniform."""
    assert claims.check_tabu1(_tabu1(sync), "test").holds is False


def test_tabu1_fails_when_sequential_gibbs_misses_the_target():
    t = _tabu1(lambda p: np.full(4, 0.25))
    t["sequential_gibbs_stationary"] = np.full(4, 0.25)
    assert claims.check_tabu1(t, "test").holds is False


# ---------------------------------------------------------------------------- Throughput: time to target vs peer
def _throughput_table(esca_sec, esca_lag=2.0, seeds=4, jitter=0.03, seed=0, repeats=1):
    """The throughput table (tables.throughput) of toy runs: every engine's LL climbs as -7 - 2 exp(-it / tau);
    ESCA needs ``esca_lag`` x a Gibbs sampler's iterations at ``esca_sec`` s each (tomotopy 0.1 s, CGS 0.4 s).
    ESCA and tomotopy run ``seeds`` seeds, each timed ``repeats`` times (config throughput.timing_repeats), each
    fit's clock scaled by a factor with log-sd ``jitter`` (the machine's load, a seed's other path)."""
    from scalable_bayes_papers.esca import tables

    rng = np.random.default_rng(seed)
    rows = []
    for method, thr, tau, sec, n_it in [("ESCA", 1, 5 * esca_lag, esca_sec, 60), ("ESCA", 2, 5 * esca_lag, 0.6 * esca_sec, 60),
                                        ("tomotopy", 1, 5, 0.1, 30), ("tomotopy", 2, 5, 0.06, 30), ("CGS", 1, 5, 0.4, 30)]:
        for sd in range(seeds):
            for rep in range(1 if method == "CGS" else repeats):
                f = float(np.exp(rng.normal(0, jitter)))
                for it in range(0, n_it + 1, 5):
                    rows.append({"train_corpus": "toy", "method": method, "threads": thr, "seed": sd, "n_topics": 10,
                                 "alpha": 0.5, "beta": 0.1, "iteration": it, "n_tokens": 1000, "wall_time": f * sec * it,
                                 "cpu_time": f * sec * it * thr, "tokens_per_s": 1000 / sec, "repeat": rep,
                                 "heldout_ll": -7.0 - 2.0 * np.exp(-it / tau), "state_bytes": 2**20,
                                 "peak_rss_mib": 100.0})
    return tables.throughput(pd.DataFrame(rows), quality_tol=0.05)


def test_throughput_esca_first_to_the_target_passes():
    c = claims.check_throughput(_throughput_table(esca_sec=0.03), "test")
    assert c.verdict == "holds" and len(c.evidence) == 2
    assert all("4 seeds" in e.sd_from for e in c.evidence)


def test_throughput_fails_when_esca_is_2x_slower_per_iteration():
    """ESCA's iteration only 1.5x cheaper than tomotopy's instead of 3x (e.g. the alias tables rebuilt every
    token): with twice the iterations it reaches the target after the peer."""
    c = claims.check_throughput(_throughput_table(esca_sec=0.1 / 1.5), "test")
    assert c.verdict == "fails"


def test_throughput_ratio_within_its_seeds_spread_is_undecided_and_one_seed_is_not_checked():
    """ESCA's iteration 2x cheaper with 2x the iterations (par, the quick run's 0.90x-1.07x at 2 threads) with
    seeds whose times differ by 10%: undecided. One seed is not checked, however many timing repeats re-time
    it: repeats measure the time per iteration, not the iterations another seed needs."""
    c = claims.check_throughput(_throughput_table(esca_sec=0.05, jitter=0.1, seed=3), "test")
    assert c.verdict == "undecided", c.measured
    assert all(abs(e.margin) < 2 * e.sd for e in c.evidence)
    one = claims.check_throughput(_throughput_table(esca_sec=0.03, seeds=1, repeats=4), "test")
    assert one.verdict == "not checked" and "no spread to measure" in one.note
    assert "one seed (4 timing repeat(s)" in one.note


def test_throughput_sd_is_the_seeds_sd_of_the_log_times():
    """Four seeds: the log time to the target of each engine has sd s over its seeds; the evidence's sd is
    sqrt(s_ESCA^2 / 4 + s_tomotopy^2 / 4), its df the Welch-Satterthwaite combination of the two engines' 3 df,
    and its margin the difference of the mean log times."""
    t = _throughput_table(esca_sec=0.03, jitter=0.05, seed=1)
    c = claims.check_throughput(t, "test")
    (e1,) = [e for e in c.evidence if " 1 thr" in e.name]
    rows = t.set_index(["method", "threads"])
    assert e1.margin == pytest.approx(rows.loc[("tomotopy", 1), "log_time_to_target"]
                                      - rows.loc[("ESCA", 1), "log_time_to_target"])
    assert e1.sd == pytest.approx(np.hypot(rows.loc[("ESCA", 1), "log_time_to_target_se"],
                                           rows.loc[("tomotopy", 1), "log_time_to_target_se"]))
    assert rows.loc[("ESCA", 1), "n_seeds"] == 4 and rows.loc[("ESCA", 1), "log_time_to_target_se"] > 0
    assert rows.loc[("ESCA", 1), "log_time_to_target_df"] == 3 and rows.loc[("tomotopy", 1), "log_time_to_target_df"] == 3
    assert e1.df == pytest.approx(welch_df(rows.loc[("ESCA", 1), "log_time_to_target_se"], 3,
                                           rows.loc[("tomotopy", 1), "log_time_to_target_se"], 3))
    assert 3 <= e1.df <= 6  # between one engine's 3 df and both engines' 6
    assert all(e.clock for e in c.evidence)


# ---------------------------------------------------------------------------- static and qualitative items
def test_static_and_qualitative_items_never_claim_a_verdict():
    """Fig1, Fig4, Tab1, Tab2 (rendered from a spec), TabU2 (the stand-in corpora) and TabU3 (top words to be
    read) check nothing: whatever they are given, holds stays None, so a wrong rendering can never count as
    a reproduced claim."""
    from scalable_bayes_papers.esca.static import PAPER_DATASETS

    garbage = pd.DataFrame({"x": [1, 2]})
    assert claims.check_fig1("test").holds is None and claims.check_fig4("test").holds is None
    assert claims.check_tab1(garbage, "test").holds is None and claims.check_tab2(garbage, "test").holds is None
    t2 = pd.DataFrame({"dataset": [f"d{i}" for i in range(len(PAPER_DATASETS) + 1)], "V": 10, "docs": 5, "tokens": 50})
    assert claims.check_tabu2(t2, "test").holds is None
    t3 = pd.DataFrame({"corpus": ["pubmed"], "topic": [0], "top_words": ["the of and a to in is for on with"]})
    c3 = claims.check_tabu3(t3, {"run": {"n_topics": 4, "n_iter": 3}}, "test")
    assert c3.holds is None and "the of and" in c3.measured  # stop words as topics: shown for reading, not passed


def test_fig6_fails_when_sca_misreads_beta_in_one_cell():
    """SCA right at beta = 0.1 but 8% above CGS's perplexity at beta = 0.5 (the prior's beta not passed to the
    sampler, so it runs at its default there): the grid's other cells do not excuse it."""
    t = _fig6_frame(0.0)
    off = (t.method == "ESCA_plain") & (t.beta == 0.5)
    t.loc[off, "heldout_ll"] -= np.log1p(0.08)
    c = claims.check_fig6(t, FIG6, "test")
    assert c.verdict == "fails" and c.details["a->b"]["K=100,beta=0.5"] > 0.05
    assert claims.check_fig6(_fig6_frame(0.0), FIG6, "test").verdict == "holds"
