"""The §7.1–7.3 demo modules (td_lib.two_moments_demos, higher_cumulants_demos,
spectral_bias_demos): the reports the notebooks print, the fallbacks that keep Run All going while
a student's function is missing or failing, and the checks they print."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from td_lib import higher_cumulants_demos as hc
from td_lib import spectral_bias_demos as sb
from td_lib import two_moments_demos as tm


def _stub(*args, **kwargs):
    raise NotImplementedError()


def _floats(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?", text)]


# --------------------------------------------------------------------------------- §7.1
def test_bayes_report_returns_the_exact_accuracies_and_counts_standard_errors(capsys):
    ref = {"exact": (0.6, 0.7, 0.8), "hits": (0.61, 0.7, 0.79), "n": 10_000, "seed": 11}
    assert tm.bayes_report(ref) == (0.6, 0.7, 0.8)
    out = capsys.readouterr().out
    assert "means only 60.000 %" in out and "(10,000 fresh samples, seed 11;" in out
    se = np.sqrt(0.6 * 0.4 / 10_000)
    assert f"{0.01 / se:+.1f} standard errors" in out and "+0.0 standard errors" in out


def test_order_table_demo_runs_the_students_function_or_says_why_not(capsys):
    tm.order_table_demo(_stub)
    assert capsys.readouterr().out == "(write gradient_orders above to see the table)\n"
    tm.order_table_demo(lambda c, n: 1 / 0)
    assert "(gradient_orders raised ZeroDivisionError: division by zero;" in capsys.readouterr().out
    tm.order_table_demo(lambda c, n: {**{("label", k): k if c.get(k) else None for k in range(1, 6)},
                                      **{("input", p): p + 1 for p in range(2, 5)}})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["statistic", "generic", "GELU", "tanh"]
    assert lines[3].split() == ["E[y", "x^3]", "eps^3", "-", "eps^3"]  # GELU's c_3 = 0


def test_tanh_moment_demo_prints_the_series_the_text_quotes(capsys):
    tm.tanh_moment_demo(_stub)
    out = capsys.readouterr().out
    assert out.startswith("(write tanh_sq_moment above to see the exact values)\n")
    assert "series through w^4, w^6, w^8: ['-1.3333e-04', '-1.2804e-04', '-1.2825e-04']" in out
    tm.tanh_moment_demo(lambda w, kind: np.tanh(w) ** 2 if kind == "rademacher" else 0.5)
    assert "w = 1.0: Gaussian 0.500000, Rademacher 0.580026" in capsys.readouterr().out


def test_clone_run_report_shows_only_logged_steps(capsys):
    g = SimpleNamespace(t=np.array([0, 1, 20, 150]), acc=np.full((4, 2), 0.5), rms_pre=np.ones((4, 2)))
    g.at = lambda t: int(np.nonzero(g.t == t)[0][0])
    tm.clone_run_report(g, np.full(4, 1e-3), steps=(1, 20, 56, 256, 1500))
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": [1, 20]") and out[3].endswith(": ['1.0e-03', '1.0e-03']")


# --------------------------------------------------------------------------------- §7.2
def test_bump_densities_are_the_two_classes_along_v():
    t = np.linspace(-12, 12, 20001)
    plus, minus = hc.bump_densities(t, beta_v=10.0)
    dt = t[1] - t[0]
    assert np.sum(plus) * dt == pytest.approx(1, abs=1e-9) and np.sum(minus) * dt == pytest.approx(1, abs=1e-9)
    assert np.sum(t**2 * plus) * dt == pytest.approx(1, abs=1e-9)  # same variance as class -1
    k4 = np.sum(t**4 * plus) * dt - 3
    assert k4 == pytest.approx(-2 * 100 / 121, abs=1e-8)


def test_cumulant_direction_splits_by_class_and_prints_the_moments(capsys):
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    y = np.array([1, 1, -1])
    plus, minus = hc.cumulant_direction(X, y, np.array([1.0, 0.0]))
    assert plus.tolist() == [1.0, 2.0] and minus.tolist() == [0.0]
    assert "mean +1.5000, variance 0.2500" in capsys.readouterr().out


def test_information_exponents(capsys):
    hc.information_exponents()
    got = [int(line.rsplit(" ", 1)[1]) for line in capsys.readouterr().out.splitlines()]
    assert got == [1, 3, 2, 2, 4, 1, 1]


def test_loss_curves_fall_back_to_none(capsys):
    assert hc.loss_curves(_stub, 0.4, -0.4) is None
    assert "loss_coefficients is not written yet (7.2.D.3)" in capsys.readouterr().out
    got = hc.loss_curves(lambda bu, bv, corr, s2, s4: (bu, bv, corr), 0.4, -0.4)
    assert got == {False: (5.0, 10.0, False), True: (5.0, 10.0, True)}


def test_linear_flow_ratio_reaches_the_growing_mode(capsys):
    c20, c11 = 0.49867785, 0.33931948
    hc.linear_flow_ratio(c20, c11, t=12, start=(0.01, 0.004))
    out = capsys.readouterr().out
    assert out.startswith("linear flow at t = 12: alpha_v / alpha_u = ")
    assert _floats(out)[-1] == pytest.approx(c11 / (c20 + np.hypot(c20, c11)), abs=1e-4)


def test_study_and_sweep_reports(capsys):
    rows = {1: {"med": np.array([6.5, 17.5]), "law": np.array([16.0, 32.0]), "boot": np.array([0.9, 1.1]),
                "slope": 1.0, "slope_law": 1.0}}
    hc.study_report(rows)
    hc.sweep_report([0.03], [np.nan], [0.875], 3000)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("k=1: medians [6.5, 17.5], ratio to the law [0.41, 0.55], slope 1.00 ± 0.10 "
                      "(bootstrap 90% interval 0.91–1.09); law's slope 1.00")
    assert out[1] == "delta =  0.030: median escape time       nan, not escaped after 3000 steps: 88%"


# --------------------------------------------------------------------------------- §7.3
def test_run_ungraded_keeps_run_all_going(capsys):
    def compare():
        raise NotImplementedError()

    sb.run_ungraded(compare, "7.3.C comparison", "the demos below do not need it")
    assert capsys.readouterr().out == ("7.3.C comparison skipped, not written yet (compare is still the stub); "
                                       "the demos below do not need it.\n")
    sb.run_ungraded(lambda: 1 / 0, "7.3.C comparison", "the demos below do not need it")
    cap = capsys.readouterr()
    assert "ZeroDivisionError" in cap.err
    assert cap.out == "7.3.C comparison: your code above raised (traceback printed); the demos below do not need it.\n"
    sb.run_ungraded(lambda: print("done"), "x", "y")
    assert capsys.readouterr().out == "done\n"


def test_circle_facts(capsys):
    sb.circle_facts(np.random.default_rng(1), l_max=11, k_max=3, units=10)
    out = capsys.readouterr().out.splitlines()
    assert out[1:4] == ["(cos phi)^1: frequencies present [1]", "(cos phi)^2: frequencies present [0, 2]",
                        "(cos phi)^3: frequencies present [1, 3]"]
    assert _floats(out[0])[-1] < 1e-12 and _floats(out[4])[-1] < 1e-12


def test_flow_snapshots_are_flow_amplitudes_at_the_snapshot_times():
    theta = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    kw = dict(kappa=4.0, freqs=[1, 4], grid=np.linspace(0, 2 * np.pi, 64, endpoint=False))
    amps, snaps = sb.flow_snapshots(theta, [0.0, 5.0], [5.0], **kw)
    a2, F = sb.flow_amplitudes(theta, [0.0, 5.0], **kw)
    np.testing.assert_array_equal(amps, a2)
    np.testing.assert_allclose(snaps[5.0], F[:, 1])


def test_monte_carlo_and_basri_run_reports(capsys):
    fw = {"a_mc": np.arange(7) * 0.1, "se_mc": np.full(7, 0.1), "basri": np.arange(7) * 0.1}
    sb.monte_carlo_report(fw)
    out = capsys.readouterr().out.splitlines()
    assert out[2].endswith("[0. 0. 0. 0. 0.]")
    run = SimpleNamespace(scales=(1.0, 10.0), ntk_change=np.array([0.049, 0.0076]),
                          t_fit=np.array([[2.0, 125.0, np.nan], [2.0, 81.0, 374.0]]),
                          rayleigh=np.array([[0.1, 0.02], [0.1, 0.08]]), final=lambda key: np.full((2, 3), 0.54))
    sb.basri_run_report(run, np.array([1, 4, 8]), {1: 0.3, 4: 0.3 / 46, 8: 0.3 / 202}, np.array([2.0, 79.0, 345.0]),
                        2000)
    out = capsys.readouterr().out.splitlines()
    assert "steps to residual 1/e at l = [1, 4, 8]: [2, 125, None]" in out[0]
    assert out[2:] == ["prediction from the infinite-width kernel: [2, 79, 345]",
                       "scale 1, residual amplitudes after 2000 steps: [0.54, 0.54, 0.54]",
                       "inverse eigenvalues a_1/a_l for l = 1, 4, 8: [1.0, 46.0, 202.0]"]


def _random_features(seed=5, n=8, p=3, n_query=4):
    r = np.random.default_rng(seed)
    return r.standard_normal((n, p)), r.standard_normal((n_query, p)), r.standard_normal(n)


def test_mode_by_mode_errors_confirm_the_library_flow_and_catch_a_wrong_one(capsys):
    from scipy.linalg import expm

    from td_lib import kernel_flow as kf

    Phi, Phi_q, y = _random_features()
    K = Phi @ Phi.T
    eta = 0.9 / np.linalg.eigvalsh(K / 8)[-1]
    f_flow = kf.kernel_flow_predict(K, K, y, 2.0)[:, 0]
    r_exp = -expm(-K * 2.0 / 8) @ y  # r(t) = exp(-K t/n) r(0), r(0) = -y
    f_gd = kf.kernel_gd_predict(K, Phi_q @ Phi.T, y, 25, eta=eta)[:, 0]
    flow_err, gd_err = sb.mode_by_mode_errors(f_flow, r_exp, f_gd, Phi, Phi_q, y, steps=25, eta=eta)
    assert flow_err < 1e-12 and gd_err < 1e-12
    # the explicit GD is an independent reference: the filter at half the step (or a flow at another time) is seen
    wrong_flow = kf.kernel_flow_predict(K, K, y, 2.2)[:, 0]
    wrong_gd = kf.kernel_gd_predict(K, Phi_q @ Phi.T, y, 25, eta=eta / 2)[:, 0]
    flow_bad, gd_bad = sb.mode_by_mode_errors(wrong_flow, r_exp, wrong_gd, Phi, Phi_q, y, steps=25, eta=eta)
    assert flow_bad > 1e-4 and gd_bad > 1e-4
    sb.mode_by_mode_report(f_flow, r_exp, f_gd, Phi, Phi_q, y, steps=25, eta=eta)
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "5 of the 8 training-set directions are in the null space and are never fitted."
    assert "at 4 new points" in out[1] and max(_floats(out[0]) + _floats(out[1])) < 1e-12


def test_flow_gap_is_small_on_the_circulant_flow_and_sees_wrong_rates(capsys):
    from td_lib import kernels

    theta = 2 * np.pi * np.arange(64) / 64  # equispaced: the Gram eigenvectors are Fourier modes
    ts, freqs = np.geomspace(0.3, 3e4, 12), np.array([1, 4])
    amps, _ = sb.flow_amplitudes(theta, ts, kappa=4.0, freqs=freqs, grid=2 * np.pi * np.arange(256) / 256)
    rates = kernels.von_mises_eigenvalues(freqs, 4.0)
    assert sb.flow_gap(rates, ts, amps) < 1e-10  # aliases k_(l + 64 j) are below 1e-40
    assert sb.flow_gap(2 * rates, ts, amps) > 0.1
    sb.flow_report(rates, freqs, ts, amps)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "population eigenvalues k_l: {1: 0.178751, 4: 0.02594}"
    assert _floats(out[1])[-1] < 1e-10
