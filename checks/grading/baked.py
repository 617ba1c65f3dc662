"""What each baked region of the notebooks' test cells holds (see :mod:`checks.grading.bake`).

One function per region, named as the region: it returns ``{variable: value}``, computed from
the references (td_lib and :mod:`checks.grading`) on the instructor's side. The test cell then
reads plain numbers; the grading kernel imports no reference. The regions of the other
notebooks' demos live beside this module, one module per topic (``baked_<topic>.py``); all of
them register with :func:`checks.grading.registry.baked`, the bottom module, which
:func:`checks.grading.registry.registry` imports them from (no import cycle).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.grading.registry import baked


# --------------------------------------------------------------- CNN vs LCN, lesson 3
def _noise_floors(cases):
    from td_lib import cnn_lcn as cl

    return [(float(cl.noise_floor("cnn", eta=e, sigma=s, P=p, T=t, c=c)),
             float(cl.noise_floor("lcn", eta=e, sigma=s, P=p, T=t, c=c))) for (e, s, p, t, c) in cases]


@baked
def noise_floor_visible() -> dict[str, Any]:
    """test_exF_noise_floor, visible part: (eq. 31, eq. 32) at three parameter sets."""
    cases = [(2e-3, 1.0, 6, 1.0, 0.0), (2e-3, 1.0, 6, 1.0, 0.5), (0.1, 2.0, 4, 2.0, 0.8)]
    return {"_cases": cases, "_refs": _noise_floors(cases)}


@baked
def noise_floor_hidden() -> dict[str, Any]:
    """test_exF_noise_floor, hidden part: three edge cases and 20 random parameter sets."""
    rng = np.random.default_rng(31)
    cases = [(1e-3, 1.0, 1, 1.0, 0.5), (1e-3, 0.7, 5, 40.0, 0.9), (0.05, 1.5, 3, 0.3, 0.0)]
    for _ in range(20):
        cases.append((float(10 ** rng.uniform(-4, -1)), float(rng.uniform(0.1, 3)), int(rng.integers(2, 9)),
                      float(rng.uniform(0.25, 10)), float(rng.uniform(0, 0.97))))
    return {"_cases": cases, "_refs": _noise_floors(cases)}


# ------------------------------------------------------------ §7.2 higher cumulants
@baked
def bayes_accuracy_v_hidden() -> dict[str, Any]:
    """test_ex72A_bayes (hidden): the exact Bayes accuracy from v.x alone."""
    from checks.grading.higher_cumulants import bayes_accuracy_v

    return {"_ref_bayes": {b: float(bayes_accuracy_v(b)) for b in (0.2, 1.0, 3.0, 30.0, 200.0)}}


@baked(rtol=1e-7)
def loss_coefficients_hidden() -> dict[str, Any]:
    """test_ex72D_coefficients (hidden): ReLU coefficients fitted to the exact loss, and the
    general (sigma2, sigma4) case. The fit takes finite differences of a quadrature: its last
    digits move by ~1e-9 (relative) between BLAS kernels; the test cell checks to 1e-5."""
    from checks.grading.higher_cumulants import fitted_coefficients
    from td_lib import mixed_cumulant

    fits = {(corr, bu, bv): [float(x) for x in fitted_coefficients(bu, bv, corr)]
            for corr in (False, True) for bu, bv in [(5.0, 10.0), (2.0, 3.0)]}
    general = (0.7 * 3 / 4, 0.7 * float(mixed_cumulant.cross_term(3.0, 2.0, True)) / 2, (-0.2) * (-8 / 9) / 48)
    return {"_fits": fits, "_ref_general": general}


# ------------------------------------------------------------- §7.3 spectral bias
@baked
def cos_coef_hidden() -> dict[str, Any]:
    """test_ex73C_cos_coef (hidden): cosine coefficients of the two arc-cosine NTKs, l = 0..20."""
    from checks.grading.spectral_bias import bias_coefficients
    from td_lib import kernels

    ls = np.arange(21)
    return {"_ref_nobias": [float(x) for x in kernels.basri_coefficients(ls)],
            "_ref_bias": [float(x) for x in bias_coefficients(ls)]}


# ------------------------------------------------------- §7.1b early-time linear learning
def _autograd_ntk(X, W, v, act):
    """(Theta1, Theta2) = (J1 J1^T, J2 J2^T) with the Jacobian rows by autograd."""
    import torch

    from td_lib import early_linear as el

    Xt = torch.as_tensor(X, dtype=torch.float64)
    rows1, rows2 = [], []
    for i in range(Xt.shape[0]):
        Wp = torch.as_tensor(W, dtype=torch.float64).clone().requires_grad_(True)
        vp = torch.as_tensor(v, dtype=torch.float64).clone().requires_grad_(True)
        f = el.network_output(Xt[i:i + 1], Wp, vp, act)[0]
        gW, gv = torch.autograd.grad(f, (Wp, vp))
        rows1.append(gW.flatten().numpy())
        rows2.append(gv.numpy())
    J1, J2 = np.array(rows1), np.array(rows2)
    return J1 @ J1.T, J2 @ J2.T


@baked
def ntk_autograd_visible() -> dict[str, Any]:
    """test_ex71bB_ntk, visible part: the autograd NTK of the cell's GELU network (n = 12)."""
    import torch

    from td_lib import early_linear as el

    X, _ = el.make_data(12, 5, rng=3)
    W, v = el.symmetric_init(5, 8, rng=4)
    W = W + 0.2 * torch.randn(W.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    ref1, ref2 = _autograd_ntk(X, W, v, "gelu")
    return {"_ref1": ref1, "_ref2": ref2}


@baked
def ntk_autograd_hidden() -> dict[str, Any]:
    """test_ex71bB_ntk, hidden part: the autograd NTK of the cell's four hidden networks."""
    import torch

    from td_lib import early_linear as el

    refs = []
    for act, seed in (("relu", 7), ("tanh", 8), ("softplus", 9)):
        X, _ = el.make_data(9, 4, rng=seed)
        W, v = el.symmetric_init(4, 6, rng=seed + 1)
        W = W + 0.3 * torch.randn(W.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        v = v * torch.linspace(0.5, 1.5, 6, dtype=torch.float64)
        refs.append(_autograd_ntk(X, W, v, act))
    rg = np.random.default_rng(12)
    X, W, v = rg.standard_normal((7, 6)), rg.standard_normal((5, 6)), rg.standard_normal(5)
    refs.append(_autograd_ntk(X, torch.as_tensor(W), torch.as_tensor(v), "tanh"))
    return {"_refs": refs}


# ------------------------------------------------------------------- §7.1 two moments
def _two_layer_ntk(X1, X2, W, a, act):
    """K = J(X1) J(X2)^T of f(x) = a . sigma(W x), Jacobian rows by autograd (nets' activations)."""
    import torch

    from td_lib import nets

    sig = nets.activation(act)[0]

    def jac(X):
        rows = []
        for x in X:
            Wr, ar = W.clone().requires_grad_(), a.clone().requires_grad_()
            gw, ga = torch.autograd.grad(sig(Wr @ x) @ ar, (Wr, ar))
            rows.append(torch.cat([gw.ravel(), ga]))
        return torch.stack(rows)

    return (jac(X1) @ jac(X2).T).detach().numpy()


def _ntk_points():
    import torch

    gn = torch.Generator().manual_seed(0)
    W = torch.randn(5, 3, generator=gn, dtype=torch.float64)
    a = torch.randn(5, generator=gn, dtype=torch.float64)
    X1 = torch.randn(4, 3, generator=gn, dtype=torch.float64)
    X2 = torch.randn(6, 3, generator=gn, dtype=torch.float64)
    return X1, X2, W, a


@baked
def two_layer_ntk_visible() -> dict[str, Any]:
    """test_ex71C_ntk, visible part: the autograd NTK (tanh) at the cell's seeded point."""
    return {"_Kref": _two_layer_ntk(*_ntk_points(), "tanh")}


@baked
def two_layer_ntk_hidden() -> dict[str, Any]:
    """test_ex71C_ntk, hidden part: other activations, and a square W with positive readouts."""
    import torch

    X1, X2, W, a = _ntk_points()
    gm = torch.Generator().manual_seed(5)
    W4 = 0.7 * torch.randn(4, 4, generator=gm, dtype=torch.float64)
    a4 = torch.rand(4, generator=gm, dtype=torch.float64) + 0.5
    X4 = torch.randn(3, 4, generator=gm, dtype=torch.float64)
    return {"_Krefs": {act: _two_layer_ntk(X1, X2, W, a, act) for act in ("gelu", "erf", "linear")},
            "_Kr4": _two_layer_ntk(X4, X4, W4, a4, "gelu")}


# ------------------------------------------------------------- CNN vs LCN, lesson 1
@baked(rtol=1e-9)
def lcn_loss_slopes_visible() -> dict[str, Any]:
    """test_exB_lcn_sgd_step, visible part: central differences of the LCN loss
    l = (y - y_hat(x))^2 / 2 (eqs 10-11) along the cell's random directions, for its three
    seeded cases (the same draws from default_rng(3), in the same order as the cell). A central
    difference with h = 1e-5 loses ~5 digits to cancellation (~1e-11 absolute here), which
    moves between BLAS kernels; the cell checks to 1e-7."""
    from scipy.special import erf

    def loss(w_hat, x, y):
        P, k_s, D = w_hat.shape
        lam = [sum(w_hat[p, l] @ x[(p + l) % P] for l in range(k_s)) / np.sqrt(k_s * D) for p in range(P)]
        return 0.5 * (y - sum(erf(v / np.sqrt(2)) for v in lam)) ** 2

    rng = np.random.default_rng(3)
    slopes = []
    for (P, ks, D, _eta) in [(4, 3, 20, 0.5), (5, 2, 12, 0.8), (3, 3, 10, 1.3)]:
        w = rng.standard_normal((P, ks, D))
        x = rng.standard_normal((P, D))
        row = []
        for _ in range(3):
            v, h = rng.standard_normal(w.shape), 1e-5
            row.append(float((loss(w + h * v, x, 0.7) - loss(w - h * v, x, 0.7)) / (2 * h)))
        slopes.append(row)
    return {"_slopes": slopes}


# -------------------------------------------------- §7.4 teacher nodes: demo reference results
def _course_theorem6():
    """The course's Theorem 6 functions with the signatures of Exercise 7.4.A's."""
    from td_lib import teacher_student as ts

    def monte_carlo(w_star, w_k, n, rng):
        return ts.relu_cross_moment_mc(w_star, w_k, n=n, rng=rng)

    return ts.relu_cross_moment, monte_carlo


@baked(digits=6)
def theorem6_scan_demo() -> dict[str, Any]:
    """Demo after Exercise 7.4.A: Theorem 6 against Monte Carlo at nine angles (full and quick sizes)."""
    from td_lib import teacher_student as ts

    closed, mc = _course_theorem6()
    thetas = np.linspace(0.05, np.pi - 0.05, 9)
    out = {}
    for mode, n in (("full", 400_000), ("quick", 60_000)):
        r = ts.theorem6_scan(closed, mc, thetas, n=n)
        out[mode] = {"est": r["est"][:, :2], "err": r["err"][:, :2], "exact": r["exact"][:, :2], "zmax": r["zmax"]}
    return {"_ref_scan6": out}


@baked(digits=6)
def eq10_scan_demo() -> dict[str, Any]:
    """Demo 7.4.5: the orthogonal part of the gradient against ||w_k|| (full and quick sizes)."""
    from td_lib import teacher_student as ts

    keys = ("scales", "mc", "mc_se", "exact", "z", "slope_mc", "slope_se", "slope_exact")
    out = {}
    for mode, n in (("full", 200_000), ("quick", 20_000)):
        r = ts.eq10_norm_scan(which="w", n=n)
        out[mode] = {k: r[k] for k in keys}
    return {"_ref_eq10": out}


@baked(digits=6, atol=1e-6)
def plateau_demo_reference() -> dict[str, Any]:
    """Demo after Exercise 7.4.B: trajectories of eq. 12 and escape times, and the two numbers
    the demo prints from the course's own functions (the limit constant, Theorem 6's time)."""
    from td_lib import teacher_student as ts

    tgrid = np.linspace(0, 7000, 71)
    starts = np.pi - np.array([1e-1, 1e-2, 3e-3, 1e-3])
    eps_grid = np.geomspace(1e-4, 0.5, 30)
    t3 = float(ts.escape_time(theta_start=np.pi - 1e-3, theta_end=np.pi / 2, alpha=1.0))
    a3 = float(ts.escape_time_asymptotic(eps=1e-3, theta_end=np.pi / 2, alpha=1.0))
    traj = ts.integrate_angle(starts, tgrid, alpha=1.0).T   # (start, time); angles that reached 0 are noise
    plateau = {"traj": np.where(traj < 1e-6, 0.0, traj),
               "t_exact": ts.escape_time(theta_start=np.pi - eps_grid, theta_end=np.pi / 2, alpha=1.0),
               "t_asym": ts.escape_time_asymptotic(eps=eps_grid, theta_end=np.pi / 2, alpha=1.0),
               "t3": t3, "a3": a3, "gap3": t3 - a3}
    t6 = {"c_inf": ts.escape_time_constant(np.pi / 2, 1.0), "t3": t3,
          "t_s": ts.escape_time_theorem6(eps=1e-3, theta_end=np.pi / 2, alpha=1.5, sigma=2.0, norm_k=3.0)}
    return {"_ref_plateau": plateau, "_ref_theorem6_time": t6}


# ------------------------------------------------- §7.3 spectral bias: demo reference results
@baked(digits=8)
def von_mises_rates_demo() -> dict[str, Any]:
    """Kernel-flow demo after Exercise 7.3.B: the von Mises eigenvalues (kappa = 4) at l = 1, 4, 8."""
    from td_lib import kernels

    return {"_ref_rates": kernels.von_mises_eigenvalues(np.array([1, 4, 8]), 4.0)}


@baked(digits=8)
def spectra_demo() -> dict[str, Any]:
    """Spectrum demo after Exercise 7.3.C: cosine coefficients of the two ReLU NTKs (l = 1..20)
    and Basri's closed form at l = 1 and the even l."""
    from td_lib import kernels

    ls = np.arange(1, 21)
    even = ls[(ls % 2 == 0) | (ls == 1)]
    return {"_ref_spectra": {"no_bias": kernels.cosine_coefficients_quad(kernels.relu_ntk_nobias, ls),
                             "bias": kernels.cosine_coefficients_quad(kernels.relu_ntk_bias, ls),
                             "basri": kernels.basri_coefficients(even)}}


@baked(digits=6)
def finite_width_demo_reference() -> dict[str, Any]:
    """Monte Carlo demo after Exercise 7.3.C.3: coefficients of the N = 20000 kernel, kernel
    rows at three widths, and the gap to the infinite width (full and quick sizes)."""
    from td_lib import kernels
    from td_lib.core.run import checkpoints

    W = np.random.default_rng(7320).normal(size=(20000, 2))
    phi = np.linspace(-np.pi, np.pi, 121)
    a_mc, se_mc = kernels.finite_width_coefficients(W, np.arange(7), n_grid=256, batches=100)
    rows = np.stack([kernels.finite_width_kernel(phi, np.zeros(1), W[:N])[:, 0] for N in (20, 200, 20000)])
    gaps = {}
    for mode, (k, repeats) in (("full", (10, 20)), ("quick", (5, 8))):
        widths = checkpoints(5000, num=k, start=10, zero=False)  # log-spaced integer widths
        gaps[mode] = np.stack([kernels.finite_width_gap(kernels.finite_width_kernel, widths, bias=b,
                                                        repeats=repeats, rng=7325) for b in (False, True)])
    return {"_ref_fw": {"a_mc": a_mc, "se_mc": se_mc, "rows": rows, "basri": kernels.basri_coefficients(np.arange(7))},
            "_ref_fw_gaps": gaps}


@baked(digits=8)
def bias_coefficients_demo() -> dict[str, Any]:
    """Demo 7.3.D: the cosine coefficients a_l of the bias NTK at l = 1, 4, 8."""
    from td_lib import kernels

    return {"_ref_a_bias": kernels.cosine_coefficients_quad(kernels.relu_ntk_bias, np.array([1, 4, 8]))}


@baked(digits=6, rtol=2e-2, atol=2e-3)
def basri_run_demo() -> dict[str, Any]:
    """Demo 7.3.D: the trained network's summary (circle_net.run_summary), full (2000 steps) and quick
    (200). Training is float32 GD on torch: its last bits depend on the CPU's kernels and grow over
    the steps, and a step count to the level 1/e can move by one; the demo reads it to 1 %. The
    amplitudes of modes already fitted (below 1e-3 of the target's unit amplitude) are float32
    noise that moves by tens of per cent from one run of the BLAS threads to another: ``atol``."""
    from td_lib import circle_net

    out = {}
    for mode, steps in (("full", 2000), ("quick", 200)):
        run = circle_net.train_circle_net((1, 4, 8), scales=(1.0, 10.0), n_train=128, pairs=1000, steps=steps,
                                          rng=7)
        # the CircleNetRun's fields but the final weights (None in a summary), rebuilt by the demo
        summary = {k: val for k, val in vars(circle_net.run_summary(run)).items() if k != "W_final"}
        # never reached: None in the literal, NaN again in the demo (demo_result reads it as a float array)
        summary["t_fit"] = [[None if np.isnan(t) else float(t) for t in row] for row in summary["t_fit"]]
        out[mode] = summary
    return {"_ref_basri": out}


# --------------------------------------------------- §7.1 two moments: demo reference results
@baked(digits=8)
def bayes_rules_demo() -> dict[str, Any]:
    """§7.1's opening demo: the three exact Bayes accuracies at beta = (1, 5, 10), and the
    fraction of 200,000 fresh samples (d = 16, torch seed 11) each rule classifies correctly
    (mixed_cumulant.log_likelihood_ratios: the rules Exercise 7.2.A builds). The notebook
    prints these as numbers computed beforehand, in quick and full mode alike;
    :func:`checks.two_moments.monte_carlo_claims` recomputes the deviations its prose quotes."""
    from checks.grading.two_moments import bayes_monte_carlo

    return {"_ref_bayes": bayes_monte_carlo()}


# ------------------------------------------- §7.2 higher cumulants: demo reference results
@baked(digits=6, atol=1e-12)
def exact_relu_loss_demo() -> dict[str, Any]:
    """The figure after Exercise 7.2.D: the exact ReLU loss of the mixed cumulant model along
    alpha_u, along alpha_v, and its cross term L(a, a) - L(a, -a), on a grid of 61 overlaps."""
    from td_lib import hermite

    al = np.linspace(-0.3, 0.3, 61)
    out = {}
    for corr in (False, True):
        def L(a, b, corr=corr):
            return hermite.mcm_relu_loss(a, b, correlated=corr)

        L0 = L(0.0, 0.0)
        out["correlated" if corr else "independent"] = {"u": L(al, 0.0) - L0, "cross": L(al, al) - L(al, -al),
                                                         "v": L(0.0, al) - L0}
    return {"_ref_loss": out}


@baked
def cross_term_demo() -> dict[str, Any]:
    """Demo 7.2.E (the staircase): the cross term c of the correlated clone at beta = (5, 10)."""
    from td_lib import mixed_cumulant

    return {"_ref_c": mixed_cumulant.cross_term(5.0, 10.0, True)}


# ------------------------------------------ §7.1b early-time linear: demo reference results
@baked(digits=8)
def lemma_sweep_demo() -> dict[str, Any]:
    """The lemma demo after Exercise 7.1b.B: NTK at initialisation vs the linear models' kernels
    (early_linear.lemma_sweep, GELU, alpha = 1/4, seed 0; full and quick dimensions)."""
    from td_lib import early_linear as el

    return {"_ref_lemma": {mode: el.lemma_sweep(ds, activation="gelu", alpha=0.25, n_factor=2.0, rng=0)
                           for mode, ds in (("full", [16, 32, 64, 128]), ("quick", [16, 24, 32]))}}

