"""The experiments of the §7.1b notebook: the key-lemma sweep, the agreement runs of network
and linear model, and their CNN versions (Prop. 4.1).

They are library code because ``checks/early_time_linear.py`` recomputes every number the notebook
quotes from the same calls and seeds. ``rng`` is the base seed of each driver (an int; the
data, labels and weights use ``rng``, ``rng + 1``, ``rng + 2``, or ``rng + 1000 i`` per
dimension, exactly as the int-seed API did); ``None`` or a numpy Generator draws the base
seed.

References
----------
Hu, Xiao, Adlam & Pennington (2020), Prop. 3.4, Thm. 3.2, Cor. 3.3 and Prop. 4.1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from td_lib.core import validate as V
from td_lib.core.gaussian import gaussian_expectation
from td_lib.core.run import checkpoints
from td_lib.core.runtime import bar, base_seed
from td_lib.core.validate import library_default
from td_lib.early_linear._shared import BREAKPOINTS, LAYERS, AgreementRun, CNNAgreementRun, GDRun, act
from td_lib.early_linear.cnn import cnn_ntk, cnn_symmetric_init, cnn_teacher_labels, train_cnn
from td_lib.early_linear.cnn_kernel import (
    _cnn_constants,
    _low_order,
    cnn_linear_features,
    cnn_linear_kernel,
    cnn_ntk_infinite,
    cnn_walsh_rates,
)
from td_lib.early_linear.fcn import (  # ntk_at_init: lemma_sweep's default (library_default)
    make_data,
    ntk_at_init,  # noqa: F401
    symmetric_init,
    teacher_labels,
    train_network,
)
from td_lib.early_linear.linear import (  # linear_constants, linear_kernel: the default of linear_kernels
    gd_on_features,
    linear_constants,  # noqa: F401
    linear_kernel,  # noqa: F401
    linear_mode_rates,
    spectral_norm,
    time_scale,
)

__all__ = ["lemma_sweep", "agreement_run", "first_time_within", "cnn_kernel_sweep",
           "cnn_agreement_run"]


def _n_of(d: int, alpha: float, n_factor: float) -> int:
    """``n = 2 round(n_factor d^{1+alpha} / 2)`` (at least 2): the regime ``n >~ d^{1+alpha}``."""
    return max(2, 2 * int(round(n_factor * d ** (1 + alpha) / 2)))


def _ntk_pair(ntk, X, W, v, activation: str) -> tuple[np.ndarray, np.ndarray]:
    """(Theta1, Theta2) of network (1) at initialisation: the caller's ``ntk`` or the library's."""
    if ntk is None:
        lib = library_default("ntk_at_init", globals(), "ntk")
        return lib(X, W, v, activation, "first"), lib(X, W, v, activation, "second")
    if not callable(ntk):
        raise TypeError(f"ntk must be a function (X, W, v, phi, dphi) -> (Theta1, Theta2), got {ntk!r}")
    a = act(activation)
    T1, T2 = (np.asarray(t, dtype=float) for t in ntk(np.asarray(X, dtype=float), W.numpy().astype(float),
                                                      v.numpy().astype(float), a.f, a.df))
    n = X.shape[0]
    if T1.shape != (n, n) or T2.shape != (n, n):
        raise ValueError(f"ntk must return two ({n}, {n}) matrices, got shapes {T1.shape} and {T2.shape}")
    return T1, T2


def _kernels_fn(linear_kernels):
    """The function ``(X, activation, tr_sigma2_over_d) -> (K1, K2)`` of the linear models (5), (9):
    the caller's ``linear_kernels``, or one built on the library's constants and kernels."""
    if linear_kernels is not None:
        if not callable(linear_kernels):
            raise TypeError("linear_kernels must be a function (X, activation, tr_sigma2_over_d) -> (K1, K2), "
                            f"got {linear_kernels!r}")
        return linear_kernels
    constants = library_default("linear_constants", globals(), "linear_kernels")
    kernel = library_default("linear_kernel", globals(), "linear_kernels")

    def library(X, activation, tr_sigma2_over_d=1.0):
        c = constants(activation, tr_sigma2_over_d)
        return kernel(X, c, "first"), kernel(X, c, "second")

    return library


def _kernel_pair(kernels, X: np.ndarray, activation: str, t2: float) -> tuple[np.ndarray, np.ndarray]:
    """``(K1, K2)`` on the rows of ``X`` from ``kernels``, as float arrays of shape (n, n)."""
    K1, K2 = (np.asarray(k, dtype=float) for k in kernels(np.asarray(X, dtype=float), activation, t2))
    n = X.shape[0]
    if K1.shape != (n, n) or K2.shape != (n, n):
        raise ValueError(f"linear_kernels must return two ({n}, {n}) matrices, got shapes {K1.shape} and {K2.shape}")
    return K1, K2


def _zeta2_nu2(kernels, activation: str, t2: float) -> tuple[float, float]:
    """``(zeta^2, nu^2)`` read off ``K1 = (zeta^2 x.x' + nu^2) / d`` on the two unit vectors of R^2."""
    K1, _ = _kernel_pair(kernels, np.eye(2), activation, t2)
    return float(2 * (K1[0, 0] - K1[0, 1])), float(2 * K1[0, 1])


def _kernel_features(K: np.ndarray, K_cross: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features ``Psi`` with ``Psi Psi^T = K`` (training set, one column per eigenvalue of ``K`` above
    1e-10 of the largest, largest first) and the test features ``K_cross Q / sqrt(lambda)`` of the
    rows of ``K_cross`` (test x train): GD from zero on them makes the predictions of GD on any
    features of kernel ``K``."""
    lam, Q = np.linalg.eigh(0.5 * (K + K.T))
    keep = np.flatnonzero(lam > 1e-10 * max(float(lam.max()), 0.0))[::-1]
    root = np.sqrt(lam[keep])
    return Q[:, keep] * root, K_cross @ Q[:, keep] / root


def lemma_sweep(ds: Sequence[int], *, activation: str = "gelu", alpha: float = 0.25,
                n_factor: float = 2.0, rng=0, progress: bool | str = False, ntk=None,
                linear_kernels=None) -> dict:
    """Distance between the network's NTK at initialisation and the linear models' kernels.

    For each ``d`` in ``ds``: ``n = m = 2 round(n_factor d^{1+alpha} / 2)`` (the paper's
    regime ``n, m >~ d^{1+alpha}``), data from ``make_data`` (ramp spectrum, Gaussian entries,
    seed ``rng + 1000 i``), the symmetric initialisation (seed ``rng + 1000 i + 1``), and the
    relative spectral distances

    * ``rel1``: ``||Theta1 - K1|| / ||K1||`` (Prop. 3.4, first layer);
    * ``rel1_id``: the same with the identity part ``diag1 I`` added to ``K1``;
    * ``rel1_nonu``: the same with ``nu = 0`` (the constant feature left out);
    * ``frob1``: ``||Theta1 - K1||_F / ||K1||_2`` (a Frobenius-norm distance, not small);
    * ``rel``: ``||Theta - K|| / ||K||`` for both layers (``Theta = Theta1 + Theta2``),

    with ``slope_<key>``, the fitted exponent of ``d``. ``ntk(X, W, v, phi, dphi)`` returns
    ``(Theta1, Theta2)`` for numpy ``W`` (m, d), ``v`` (m,) and the activation and its
    derivative (a function the caller wrote); default: :func:`ntk_at_init`.
    ``linear_kernels(X, activation, tr_sigma2_over_d)`` returns ``(K1, K2)`` on the rows of ``X``
    (a function the caller wrote); default: the library's. ``zeta^2`` and ``nu^2`` (for
    ``kappa = E phi'(g)^2 - zeta^2`` and ``nu = 0``) are read off its ``K1`` on two unit vectors.

    References
    ----------
    Hu et al. (2020), Prop. 3.4.

    Examples
    --------
    >>> r = lemma_sweep([8], activation="relu", rng=1)
    >>> int(r["n"][0]), bool(r["rel1_id"][0] < r["rel1_nonu"][0])
    (26, True)
    """
    ds = [V.positive_int("ds", d, minimum=2) for d in ds]
    alpha = V.in_interval("alpha", alpha, 0.0, 1.0, closed="both")
    n_factor = V.finite("n_factor", n_factor, positive=True)
    seed = base_seed(rng)
    dphi = act(activation).df
    e_dphi2 = float(gaussian_expectation(lambda x: dphi(x) ** 2, breakpoints=BREAKPOINTS))
    keys = ("rel1", "rel1_id", "rel1_nonu", "frob1", "rel")
    out: dict[str, list] = {k: [] for k in ("d", "n", *keys)}
    for i, d in enumerate(bar(ds, progress, "NTK vs linear kernel")):
        n = _n_of(d, alpha, n_factor)
        X, S = make_data(n, d, rng=seed + 1000 * i)
        W, v = symmetric_init(d, n, rng=seed + 1000 * i + 1)
        T1, T2 = _ntk_pair(ntk, X, W, v, activation)
        kernels = _kernels_fn(linear_kernels)
        t2 = float(np.trace(S @ S)) / d
        K1, K2 = _kernel_pair(kernels, X, activation, t2)
        zeta2, nu2 = _zeta2_nu2(kernels, activation, t2)
        kappa = e_dphi2 - zeta2
        nK1 = spectral_norm(K1)
        out["d"].append(d)
        out["n"].append(n)
        out["rel1"].append(spectral_norm(T1 - K1) / nK1)
        out["rel1_id"].append(spectral_norm(T1 - K1 - kappa * np.eye(n)) / nK1)
        out["rel1_nonu"].append(spectral_norm(T1 - (K1 - nu2 / d)) / nK1)
        out["frob1"].append(float(np.linalg.norm(T1 - K1)) / nK1)
        out["rel"].append(spectral_norm(T1 + T2 - K1 - K2) / spectral_norm(K1 + K2))
    res = {k: np.asarray(v) for k, v in out.items()}
    logd = np.log(res["d"])
    for k in keys:
        res["slope_" + k] = float(np.polyfit(logd, np.log(res[k]), 1)[0]) if len(ds) > 1 \
            else float("nan")
    return res


def _log_checkpoints(T: float, t_max: float, n_checkpoints: int) -> tuple[int, np.ndarray]:
    """The last step ``round(t_max T)`` (at least 2) and 0 followed by log-spaced steps to it."""
    t_end = max(2, int(round(V.finite("t_max", t_max, positive=True) * T)))
    return t_end, checkpoints(t_end, num=V.positive_int("n_checkpoints", n_checkpoints), rounding="round")


def agreement_run(d: int, *, activation: str = "relu", layers: str = "first",
                  eta: float | None = None, n_per_d: int = 12, n_test: int = 400,
                  t_max: float = 16.0, n_checkpoints: int = 30, rng=0,
                  reach_rtol: float = 1e-3, progress: bool | str = False, linear_kernels=None) -> AgreementRun:
    """Train network (1) and the matching linear model on the same data; compare predictions.

    ``n = m = n_per_d * d``; labels ``y = y_lin + y_quad`` from ``teacher_labels`` (a linear
    and a quadratic part of unit variance each). ``eta`` defaults to ``d/8`` for
    ``layers="first"`` (the paper needs ``eta1 << d``) and to 1 otherwise. Checkpoints are
    log-spaced up to ``t_max * T`` with ``T = d log d / eta``. ``progress`` shows a bar over
    the network's GD steps. The linear model is GD from zero on features of its kernel ``K1``,
    ``K2`` or ``K1 + K2``: ``linear_kernels(X, activation, tr_sigma2_over_d)`` returns ``(K1, K2)``
    (a function the caller wrote; default: the library's).

    Returns
    -------
    AgreementRun
        At the checkpoints ``t``: ``t_over_T``, the relative RMS differences
        ``rel_train``/``rel_test`` (``||f_net - f_lin|| / ||f_lin||``), the losses ``loss_net``,
        ``loss_lin`` (train) and ``test_net``, ``test_lin``, the overlaps ``lin_net``,
        ``quad_net``, ``lin_lin``, ``quad_lin`` of the predictions with ``y_lin`` and ``y_quad``
        on the test set (``E[f y_part] / E[y_part^2]``); and ``d``, ``n``, ``eta``, ``T``,
        ``test_best_lin`` (test loss of the converged linear model), ``lin_reach_T``: the first
        time (in units of ``T``, over every integer step up to ``t_max T``) at which the linear
        model's test loss is within ``reach_rtol`` (relative) of ``test_best_lin``
        (:func:`first_time_within`), ``psi_train``, the linear model's features on the training
        set (``Psi Psi^T = K``: the features (5), (9) or (11) up to a rotation), ``mode_rates``,
        the per-step rates ``eta mu_k`` of its GD modes (:func:`linear_mode_rates`, largest
        first), and ``zeta2``, ``zeta^2`` read off ``K1``.

    References
    ----------
    Hu et al. (2020), Thm. 3.2 (first layer), Thm. 3.5 and D.1, Cor. 3.3.
    """
    d = V.positive_int("d", d, minimum=2)
    V.choice("layers", layers, LAYERS)
    reach_rtol = V.finite("reach_rtol", reach_rtol, positive=True)
    eta = (d / 8 if layers == "first" else 1.0) if eta is None else V.finite("eta", eta,
                                                                             positive=True)
    n = V.positive_int("n_per_d", n_per_d) * d
    n_test = V.positive_int("n_test", n_test)
    T = time_scale(d, eta)
    t_end, ts = _log_checkpoints(T, t_max, n_checkpoints)
    seed = base_seed(rng)
    X, S = make_data(n + n_test, d, rng=seed)
    y_lin = teacher_labels(X, S, linear=1.0, quadratic=0.0, rng=seed + 1)
    y_quad = teacher_labels(X, S, linear=0.0, quadratic=1.0, rng=seed + 1)
    y = y_lin + y_quad
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    kernels = _kernels_fn(linear_kernels)
    t2 = float(np.trace(S @ S)) / d
    K1, K2 = _kernel_pair(kernels, X, activation, t2)
    K = {"first": K1, "second": K2, "both": K1 + K2}[layers]
    psi, psi_te = _kernel_features(K[:n, :n], K[n:, :n])
    zeta2 = _zeta2_nu2(kernels, activation, t2)[0]
    import torch

    W, v = symmetric_init(d, n, rng=seed + 2, dtype=torch.float32)
    net = train_network(Xtr, ytr, W, v, activation=activation, eta=eta, layers=layers,
                        checkpoints=ts, X_test=Xte, progress=progress)
    lin = gd_on_features(psi, ytr, eta=eta, checkpoints=ts, psi_test=psi_te)
    best, reach = _best_linear_reach(psi, psi_te, ytr, yte, eta, t_end, reach_rtol)
    return AgreementRun(t=ts, t_over_T=ts / T, d=d, n=n, eta=eta, T=T, lin_reach_T=reach / T, psi_train=psi,
                        mode_rates=linear_mode_rates(psi, eta), zeta2=zeta2,
                        **_agreement_curves(net, lin, ts, yte, y_lin[n:], y_quad[n:], best))


def _best_linear_reach(psi, psi_te, ytr, yte, eta: float, t_end: int, reach_rtol: float) -> tuple[float, float]:
    """Test loss of the best linear model (least squares on the features) and the first GD
    step at which the linear model's test loss is within ``reach_rtol`` of it."""
    beta_star = np.linalg.lstsq(psi, ytr, rcond=None)[0]
    best = float(0.5 * np.mean((psi_te @ beta_star - yte) ** 2))
    dense = gd_on_features(psi, ytr, eta=eta, checkpoints=np.arange(t_end + 1), psi_test=psi_te)
    reach = first_time_within(dense.t, 0.5 * np.mean((dense.test - yte) ** 2, axis=1),
                              target=best, rtol=reach_rtol)
    return best, reach


def _agreement_curves(net: GDRun, lin: GDRun, ts: np.ndarray, yte: np.ndarray, yl: np.ndarray,
                      yq: np.ndarray, best: float) -> dict:
    """What both agreement drivers report: network vs linear model (relative rms gap on train
    and test; both predictions vanish at t = 0, so it is NaN there), losses, test losses
    beside the best linear model's, and the test predictions' projections on the linear
    (``yl``) and the quadratic or local (``yq``) parts of the labels."""

    def rms(a: np.ndarray) -> np.ndarray:
        return np.sqrt(np.mean(a**2, axis=-1))

    with np.errstate(invalid="ignore", divide="ignore"):
        rel_train = rms(net.train - lin.train) / rms(lin.train)
        rel_test = rms(net.test - lin.test) / rms(lin.test)
    rel_train[ts == 0] = np.nan
    rel_test[ts == 0] = np.nan
    return {
        "rel_train": rel_train, "rel_test": rel_test,
        "loss_net": net.loss, "loss_lin": lin.loss,
        "test_net": 0.5 * np.mean((net.test - yte) ** 2, axis=1),
        "test_lin": 0.5 * np.mean((lin.test - yte) ** 2, axis=1),
        "test_best_lin": best,
        "lin_net": net.test @ yl / (yl @ yl), "quad_net": net.test @ yq / (yq @ yq),
        "lin_lin": lin.test @ yl / (yl @ yl), "quad_lin": lin.test @ yq / (yq @ yq),
    }


def first_time_within(t: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray, *,
                      target: float, rtol: float) -> float:
    """First ``t[i]`` at which a loss curve coming down reaches ``target`` up to ``rtol``:
    ``values[i] <= (1 + rtol) target`` (``nan`` if never). A curve that dips below the
    target counts from the step it gets within ``rtol`` of it.

    Examples
    --------
    >>> first_time_within([0, 1, 2, 3], [4.0, 2.5, 2.001, 1.9], target=2.0, rtol=1e-3)
    2.0
    """
    t = V.array("t", t, ndim=1)
    values = V.array("values", values, shape=t.shape)
    target = V.finite("target", target, positive=True)
    rtol = V.finite("rtol", rtol, nonnegative=True)
    hit = np.flatnonzero(values <= (1.0 + rtol) * target)
    return float(t[hit[0]]) if hit.size else float("nan")


def cnn_kernel_sweep(ds: Sequence[int], qs: Sequence[int], *, activation: str = "relu",
                     alpha: float = 0.25, n_factor: float = 2.0, rng=0,
                     progress: bool | str = False) -> dict:
    """Prop. 4.1 numerically: the infinite-width CNN NTK against its linear kernel.

    For each ``d`` in ``ds`` (``n = 2 round(n_factor d^{1+alpha} / 2)`` hypercube points, seed
    ``rng + 1000 i``) and each filter size ``q`` in ``qs`` (``q <= d``), with
    ``L = 2 zeta^2 X X^T / d`` (the scaled data kernel, norm ``Theta(n/d)``):

    * ``rel``: ``||Theta* - L - (const1 + const2) 1 1^T - kappa I|| / ||L||`` with the exact
      constants (those of :class:`CNNLinearConstants`) and ``kappa = diag1 + diag2``;
    * ``rel_lead``: the same with the leading-order constant ``c_0^2 + 3 c_2^2 / (2q)``;
    * ``rel_noid``: the same as ``rel`` without the identity part ``kappa I``.

    Arrays of shape ``(len(ds), len(qs))`` (``nan`` where ``q > d``), and ``d``, ``q``, ``n``.

    References
    ----------
    Hu et al. (2020), Prop. 4.1 (as reconstructed from App. E).

    Examples
    --------
    >>> r = cnn_kernel_sweep([8], [2, 4], rng=0)
    >>> r["rel"].shape, bool(r["rel"][0, 1] < r["rel"][0, 0])
    ((1, 2), True)
    """
    ds = [V.positive_int("ds", d, minimum=3) for d in ds]
    qs = [V.positive_int("qs", q) for q in qs]
    alpha = V.in_interval("alpha", alpha, 0.0, 1.0, closed="both")
    n_factor = V.finite("n_factor", n_factor, positive=True)
    seed = base_seed(rng)
    c0_2, zeta2, c2_2 = _low_order(activation)   # c_0^2, c_1^2 = zeta^2, c_2^2
    keys = ("rel", "rel_lead", "rel_noid")
    res = {k: np.full((len(ds), len(qs)), np.nan) for k in keys}
    ns = []
    for i, d in bar(list(enumerate(ds)), progress, "CNN NTK vs linear kernel"):
        n = _n_of(d, alpha, n_factor)
        ns.append(n)
        X, _ = make_data(n, d, spectrum="flat", entries="rademacher", rotate=False,
                         rng=seed + 1000 * i)
        L = 2 * zeta2 * X @ X.T / d
        nL = spectral_norm(L)
        for j, q in enumerate(qs):
            if q > d:
                continue
            c = _cnn_constants(activation, q)
            Th = cnn_ntk_infinite(X, q, activation, "both")
            kap = (c.diag1 + c.diag2) * np.eye(n)
            lead = c0_2 + 1.5 * c2_2 / q
            res["rel"][i, j] = spectral_norm(Th - L - (c.const1 + c.const2) - kap) / nL
            res["rel_lead"][i, j] = spectral_norm(Th - L - lead - kap) / nL
            res["rel_noid"][i, j] = spectral_norm(Th - L - (c.const1 + c.const2)) / nL
    res.update(d=np.asarray(ds), q=np.asarray(qs), n=np.asarray(ns))
    return res


def cnn_agreement_run(d: int, q: int, *, activation: str = "relu", layers: str = "both",
                      m: int | None = None, eta: float = 4.0, n_per_d: int = 8,
                      n_test: int = 400, t_max: float = 8.0, n_checkpoints: int = 30,
                      rng=0, reach_rtol: float = 1e-3, progress: bool | str = False) -> CNNAgreementRun:
    """Train the CNN (12) and its linear model on the same hypercube data; compare.

    ``n = n_per_d d`` training points, ``m`` filters (default ``n``), labels
    ``y = y_lin + y_loc`` from :func:`cnn_teacher_labels` (a linear part and a local quadratic
    part, unit variance each), GD with step ``eta`` on ``layers``; the linear model is GD from
    zero on :func:`cnn_linear_features` with the same step. Checkpoints are log-spaced up to
    ``t_max T``, ``T = d log d / eta``.

    Returns
    -------
    CNNAgreementRun
        The fields of :func:`agreement_run`'s record (``quad_*`` are the overlaps with ``y_loc``;
        no ``psi_train``, ``mode_rates``, ``zeta2``), plus ``q``, ``m``, ``ntk_rel``: the relative
        distance ``||Theta(0) - K_CNN - kappa I|| / ||2 zeta^2 X X^T / d||`` of the finite-width
        NTK at initialisation on the training set, ``ntk_rel_inf`` the same for the
        infinite-width NTK, ``eta_K_over_n`` (``eta ||K_CNN|| / n``, at most 1 in App. C) and
        ``rate_linear``, ``rate_local``, the population rates of :func:`cnn_walsh_rates`.

    References
    ----------
    Hu et al. (2020), §4.1 and Prop. 4.1; App. C for the step bound.
    """
    import torch

    d = V.positive_int("d", d, minimum=3)
    q = V.positive_int("q", q)
    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    n = V.positive_int("n_per_d", n_per_d) * d
    m = n + (n % 2) if m is None else V.positive_int("m", m, minimum=2)
    n_test = V.positive_int("n_test", n_test)
    reach_rtol = V.finite("reach_rtol", reach_rtol, positive=True)
    T = time_scale(d, eta)
    t_end, ts = _log_checkpoints(T, t_max, n_checkpoints)
    seed = base_seed(rng)
    X, _ = make_data(n + n_test, d, spectrum="flat", entries="rademacher", rotate=False, rng=seed)
    y_lin = cnn_teacher_labels(X, linear=1.0, local=0.0, rng=seed + 1)
    y_loc = cnn_teacher_labels(X, linear=0.0, local=1.0, rng=seed + 1)
    y = y_lin + y_loc
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    c = _cnn_constants(activation, q)
    W, Vr = cnn_symmetric_init(d=d, q=q, m=m, rng=seed + 2, dtype=torch.float64)
    L = 2 * c.zeta**2 * Xtr @ Xtr.T / d
    K = cnn_linear_kernel(Xtr, c, layers)
    kap = {"first": c.diag1, "second": c.diag2, "both": c.diag1 + c.diag2}[layers] * np.eye(n)
    nL = spectral_norm(L)
    ntk_rel = spectral_norm(cnn_ntk(Xtr, W, Vr, activation, layers) - K - kap) / nL
    ntk_rel_inf = spectral_norm(cnn_ntk_infinite(Xtr, q, activation, layers) - K - kap) / nL
    net = train_cnn(Xtr, ytr, W.to(torch.float32), Vr.to(torch.float32), activation=activation,
                    eta=eta, layers=layers, checkpoints=ts, X_test=Xte, progress=progress)
    psi, psi_te = cnn_linear_features(Xtr, c, layers), cnn_linear_features(Xte, c, layers)
    lin = gd_on_features(psi, ytr, eta=eta, checkpoints=ts, psi_test=psi_te)
    best, reach = _best_linear_reach(psi, psi_te, ytr, yte, eta, t_end, reach_rtol)

    return CNNAgreementRun(
        t=ts, t_over_T=ts / T, d=d, q=q, n=n, m=m, eta=eta, T=T, lin_reach_T=reach / T, ntk_rel=ntk_rel,
        ntk_rel_inf=ntk_rel_inf, eta_K_over_n=eta * spectral_norm(K) / n,
        **{"rate_" + k: v for k, v in cnn_walsh_rates(activation, q, d, layers).items()},
        **_agreement_curves(net, lin, ts, yte, y_lin[n:], y_loc[n:], best))
