"""Population theory of the two-layer ReLU teacher–student (Tian 2020, Theorem 6, eqs. 6–10).

Theorem 6's closed-form ReLU expectation ``M(w*, w_k) = E[x 1{w_kᵀx > 0} relu(w*ᵀx)]`` for
spherically symmetric inputs (:func:`relu_cross_moment`, with a Monte Carlo check), the
degree-1 arc-cosine kernel ``E[relu(aᵀx) relu(bᵀx)]`` (:func:`relu_kernel`), and with them
the population gradient flow of a bias-free two-layer student in closed form
(:func:`population_gradient`, its Monte Carlo check and integrator). The flow shows that the
pull on ``w_k`` scales with the fan-out ``‖v_k‖``, not with the ``‖w_k‖`` of eq. 10
(:func:`~td_lib.teacher_student.mc_checks.eq10_norm_scan`). The angle dynamics of eq. 12 are in
:mod:`~td_lib.teacher_student.angle`.

Notation: ``θ`` the angle between two weight vectors, ``ŵ = w/‖w‖``, ``x ~ N(0, σ²I_d)``.

Examples
--------
>>> import numpy as np
>>> relu_cross_moment(np.array([1.0, 0.0]), np.array([0.0, 3.0])).round(6).tolist()
[0.25, 0.159155]
>>> round(float(relu_kernel(np.array([1.0, 0.0]), np.array([2.0, 0.0]))), 12)  # ‖a‖‖b‖/2
1.0
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

from td_lib.core import validate as V
from td_lib.core.gaussian import arccos_kernel
from td_lib.core.runtime import numpy_rng
from td_lib.core.validate import library_default
from td_lib.teacher_student.model import RELU

__all__ = ["pair_at_angle", "relu_cross_moment", "relu_cross_moment_mc", "relu_kernel",
           "population_gradient", "population_gradient_mc", "population_flow"]


def pair_at_angle(*, d: int, theta: float, norm_star: float, norm_k: float,
                  rng=None) -> tuple[np.ndarray, np.ndarray]:
    """A random pair (w*, w_k) in R^d at angle ``theta`` with norms ``norm_star``, ``norm_k``.

    Used to test Theorem 6 (:func:`relu_cross_moment`) at prescribed angles. ``rng`` is an
    int seed, ``None`` or a numpy Generator (drawn from in place).

    Examples
    --------
    >>> a, b = pair_at_angle(d=4, theta=1.0, norm_star=2.0, norm_k=0.5, rng=0)
    >>> round(float(np.arccos(a @ b / 1.0)), 12), round(float(np.linalg.norm(a)), 12)
    (1.0, 2.0)
    """
    d = V.positive_int("d", d, minimum=2)
    theta = V.in_interval("theta", theta, 0.0, np.pi, closed="both")
    norm_star = V.finite("norm_star", norm_star, positive=True)
    norm_k = V.finite("norm_k", norm_k, positive=True)
    rng = numpy_rng(rng)
    a = rng.standard_normal(d)
    a /= np.linalg.norm(a)
    u = rng.standard_normal(d)
    u -= (u @ a) * a
    u /= np.linalg.norm(u)
    return norm_star * a, norm_k * (np.cos(theta) * a + np.sin(theta) * u)


def relu_cross_moment(w_star, w_k, *, dist: str = "gaussian", sigma: float = 1.0,
                      radius: float = 1.0) -> np.ndarray:
    """Theorem 6: ``E_x[x · 1{w_kᵀx > 0} · relu(w*ᵀx)]`` for spherically symmetric ``x``.

    With ``θ`` the angle between ``w*`` and ``w_k`` and ``ŵ = w/‖w‖``,

        E[x z_k f*_j] = (E‖x‖²/d) · ‖w*‖/(2π) · [(π − θ) ŵ* + sin θ · ŵ_k],

    where ``E‖x‖²/d = σ²`` for ``x ~ N(0, σ²I_d)`` and ``r²/d`` for ``x`` uniform on the
    sphere of radius ``r``. This is Tian's Theorem 6 with the constant written out. The
    expectation is degree-1 homogeneous in ``w*`` and degree-0 in ``w_k`` (``z_k`` is an
    indicator); the original course notes print the prefactor ``‖w*_j‖‖w_k‖/2``, which is right only up to
    the dropped constant and with unit vectors inside the bracket.

    Parameters
    ----------
    w_star, w_k : array, shape (..., d)
        Broadcast against each other; neither may be zero.
    dist : {"gaussian", "sphere"}
    sigma : float
        Standard deviation per coordinate (Gaussian).
    radius : float
        Radius of the sphere (``dist="sphere"``).

    Returns
    -------
    ndarray, shape (..., d)

    References
    ----------
    Tian (2020), Theorem 6 (constant written out; the printed prefactor ``‖w*_j‖‖w_k‖/2``
    with unnormalised vectors is corrected, see the §7.4 notebook).

    Examples
    --------
    >>> ws = np.array([1.0, 0.0, 0.0])
    >>> relu_cross_moment(ws, 5 * ws).round(6).tolist()  # θ = 0: E[x relu(w·x)] = w/2
    [0.5, 0.0, 0.0]
    >>> round(float(np.abs(relu_cross_moment(ws, -ws)).max()), 12)  # θ = π: disjoint half-spaces
    0.0
    """
    ws = V.array("w_star", w_star)
    wk = V.array("w_k", w_k)
    if ws.ndim < 1 or wk.ndim < 1 or ws.shape[-1] != wk.shape[-1]:
        raise ValueError(f"w_star and w_k must be vectors of the same length, got "
                         f"{ws.shape} and {wk.shape}")
    V.choice("dist", dist, ("gaussian", "sphere"))
    d = ws.shape[-1]
    if dist == "gaussian":
        m2 = V.finite("sigma", sigma, positive=True) ** 2
    else:
        m2 = V.finite("radius", radius, positive=True) ** 2 / d
    ns = np.linalg.norm(ws, axis=-1, keepdims=True)
    nk = np.linalg.norm(wk, axis=-1, keepdims=True)
    if np.any(ns == 0):
        raise ValueError("w_star must be non-zero")
    if np.any(nk == 0):
        raise ValueError("w_k must be non-zero")
    us, uk = ws / ns, wk / nk
    c = np.clip((us * uk).sum(-1, keepdims=True), -1.0, 1.0)
    th = np.arccos(c)
    return m2 * ns / (2 * np.pi) * ((np.pi - th) * us + np.sin(th) * uk)


def relu_cross_moment_mc(w_star, w_k, *, n: int, rng=0, dist: str = "gaussian",
                         chunk: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo estimate of Theorem 6's expectation from ``n`` samples, with its standard
    error.

    ``x ~ N(0, I_d)`` (``dist="gaussian"``) or uniform on the unit sphere; ``rng`` an int
    seed, ``None`` or a numpy Generator; ``chunk`` samples are drawn at a time. Returns the
    mean and the standard error per coordinate, each of shape (d,).

    References
    ----------
    Tian (2020), Theorem 6 (the expectation this estimates).
    """
    ws = V.array("w_star", w_star, ndim=1)
    wk = V.array("w_k", w_k, shape=(ws.size,))
    n_samples = V.positive_int("n", n, minimum=2)
    V.choice("dist", dist, ("gaussian", "sphere"))
    rng = numpy_rng(rng)
    s1 = np.zeros(ws.size)
    s2 = np.zeros(ws.size)
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        x = rng.standard_normal((k, ws.size))
        if dist == "sphere":
            x /= np.linalg.norm(x, axis=1, keepdims=True)
        v = x * (RELU.df(x @ wk) * RELU.f(x @ ws))[:, None]
        s1 += v.sum(0)
        s2 += (v * v).sum(0)
        done += k
    mean = s1 / n_samples
    var = (s2 - n_samples * mean**2) / (n_samples - 1)
    return mean, np.sqrt(np.maximum(var, 0.0) / n_samples)


def relu_kernel(a, b, *, sigma: float = 1.0) -> np.ndarray:
    """``E[relu(aᵀx) relu(bᵀx)]`` for ``x ~ N(0, σ²I_d)``: the degree-1 arc-cosine kernel

        σ² ‖a‖‖b‖/(2π) · [sin θ + (π − θ) cos θ],

    ``θ`` the angle between ``a`` and ``b`` (``= bᵀ·relu_cross_moment(a, b)``). Broadcasts
    over leading axes; a zero vector gives 0.

    References
    ----------
    Cho & Saul (2009), the arc-cosine kernel of degree 1; Tian (2020), eq. 7 (the fan-out
    gradient it enters).
    """
    a = V.array("a", a)
    b = V.array("b", b)
    if a.ndim < 1 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must be vectors of the same length, got {a.shape} and {b.shape}")
    s2 = V.finite("sigma", sigma, positive=True) ** 2
    na = np.linalg.norm(a, axis=-1)
    nb = np.linalg.norm(b, axis=-1)
    den = np.where((na > 0) & (nb > 0), na * nb, 1.0)
    c = np.clip((a * b).sum(-1) / den, -1.0, 1.0)
    return s2 * na * nb * arccos_kernel(c, degree=1)


def _flow_args(W, Vs, W_star, V_star, vname="Vo"):
    W = V.array("W", W, ndim=2)
    Vs = V.array(vname, Vs, ndim=2)
    Wt = V.array("W_star", W_star, ndim=2)
    Vt = V.array("V_star", V_star, ndim=2)
    d, n = W.shape
    if Vs.shape[0] != n:
        raise ValueError(f"{vname} must have shape (n, C) = ({n}, C), got {Vs.shape}")
    if Wt.shape[0] != d:
        raise ValueError(f"W_star must have shape (d, m) = ({d}, m), got {Wt.shape}")
    if Vt.shape != (Wt.shape[1], Vs.shape[1]):
        raise ValueError(f"V_star must have shape (m, C) = ({Wt.shape[1]}, {Vs.shape[1]}), "
                         f"got {Vt.shape}")
    if np.any(np.linalg.norm(W, axis=0) == 0):
        raise ValueError("W has a zero column (a student node with w_k = 0)")
    if np.any(np.linalg.norm(Wt, axis=0) == 0):
        raise ValueError("W_star has a zero column")
    return W, Vs, Wt, Vt


def population_gradient(W, Vo, W_star, V_star, *, sigma: float = 1.0,
                        cross_moment=None) -> tuple[np.ndarray, np.ndarray]:
    """Gradient flow of a two-layer ReLU student on the population loss, in closed form.

    Bias-free networks ``f(x) = Voᵀ relu(Wᵀx)`` (student: ``W`` (d, n), fan-outs ``Vo``
    (n, C), row ``k`` is ``v_k``; teacher
    ``W_star`` (d, m), ``V_star`` (m, C)), ``x ~ N(0, σ²I_d)``, ``J = ½E‖f* − f‖²``. With
    ``α_jk = v*_jᵀv_k``, ``β_k'k = v_k'ᵀv_k`` (Tian eq. 6) and Theorem 6's expectation
    ``M(a, w) = E[x 1{wᵀx > 0} relu(aᵀx)]`` (:func:`relu_cross_moment`),

        ẇ_k = Σ_j α_jk M(w*_j, w_k) − Σ_k' β_k'k M(w_k', w_k),
        v̇_k = Σ_j v*_j K(w_k, w*_j) − Σ_k' v_k' K(w_k, w_k')      (K = :func:`relu_kernel`).

    ``M(a, w_k)`` does not depend on ``‖w_k‖`` (a gate), so ``ẇ_k = ‖v_k‖ r̂_k`` with ``r̂_k``
    built from the unit fan-out ``v_k/‖v_k‖``: the prefactor is the fan-out norm, not the
    ``‖w_k‖`` of Tian's eq. 10. Returns ``(dW, dV)`` with the shapes of ``W`` and ``Vo``.

    ``cross_moment(a, w)``: ``M`` for one pair at ``σ = 1`` (a function the caller wrote;
    ``M`` at ``σ`` is ``σ²`` times it), used pair by pair in place of :func:`relu_cross_moment`.

    References
    ----------
    Tian (2020), eqs. 6–8 (``α_jk``, ``β_k'k`` and the gradient) with Theorem 6.

    Examples
    --------
    >>> W = np.eye(3)[:, :2]; Vo = np.array([[1.0], [0.5]])
    >>> dW, dV = population_gradient(W, Vo, W, Vo)  # the student is the teacher
    >>> float(np.abs(dW).max()), float(np.abs(dV).max())
    (0.0, 0.0)
    """
    W, Vs, Wt, Vt = _flow_args(W, Vo, W_star, V_star)
    sigma = V.finite("sigma", sigma, positive=True)
    wk = W.T[:, None, :]                      # (n, 1, d)
    M = _cross_moments(cross_moment, sigma)
    Mt = M(Wt.T[None, :, :], wk)              # (n, m, d)
    Ms = M(W.T[None, :, :], wk)               # (n, n, d): [k, k', :]
    alpha = Vs @ Vt.T                         # (n, m): α_jk
    beta = Vs @ Vs.T                          # (n, n): β_k'k
    dW = (np.einsum("kj,kjd->dk", alpha, Mt) - np.einsum("kq,kqd->dk", beta, Ms))
    Kt = relu_kernel(wk, Wt.T[None, :, :], sigma=sigma)         # (n, m)
    Ks = relu_kernel(wk, W.T[None, :, :], sigma=sigma)          # (n, n)
    dV = Kt @ Vt - Ks @ Vs
    return dW, dV


def _cross_moments(cross_moment, sigma: float):
    """``M(a, w)`` broadcast over leading axes: the library's, or ``cross_moment`` (one pair,
    ``σ = 1``) applied pair by pair and scaled by ``σ²``."""
    if cross_moment is None:
        lib = library_default("relu_cross_moment", globals(), "cross_moment")
        return lambda a, w: lib(a, w, sigma=sigma)
    if not callable(cross_moment):
        raise TypeError(f"cross_moment must be a function (w_star, w_k) -> (d,), got {cross_moment!r}")

    def pairwise(a, w):
        a, w = np.broadcast_arrays(a, w)
        out = np.empty(a.shape)
        for idx in np.ndindex(*a.shape[:-1]):
            out[idx] = sigma**2 * np.asarray(cross_moment(a[idx].copy(), w[idx].copy()), dtype=float)
        return out

    return pairwise


def population_gradient_mc(W, Vo, W_star, V_star, *, n: int, rng=0, sigma: float = 1.0,
                           chunk: int = 100_000):
    """Monte Carlo estimate of :func:`population_gradient`, with standard errors.

    Averages the per-sample gradient ``x 1{Wᵀx > 0} ⊙ (Vo e)``, ``e = f*(x) − f(x)``, (and
    ``relu(Wᵀx) eᵀ`` for ``Vo``) over ``n`` draws ``x ~ N(0, σ²I_d)`` (``rng``: an int seed,
    ``None`` or a numpy Generator). Returns ``(dW, dV, se_W, se_V)``.

    References
    ----------
    Tian (2020), eqs. 7–8 (the per-sample gradient whose mean this estimates).
    """
    W, Vs, Wt, Vt = _flow_args(W, Vo, W_star, V_star)
    n_samples = V.positive_int("n", n, minimum=2)
    sigma = V.finite("sigma", sigma, positive=True)
    chunk = V.positive_int("chunk", chunk)
    rng = numpy_rng(rng)
    d, n = W.shape
    s1W, s2W = np.zeros((d, n)), np.zeros((d, n))
    s1V, s2V = np.zeros(Vs.shape), np.zeros(Vs.shape)
    done = 0
    while done < n_samples:
        k = min(chunk, n_samples - done)
        x = sigma * rng.standard_normal((k, d))
        H = x @ W
        A = RELU.f(H)
        E = RELU.f(x @ Wt) @ Vt - A @ Vs                    # (k, C)
        gW = x[:, :, None] * ((E @ Vs.T) * RELU.df(H))[:, None, :]   # (k, d, n)
        gV = A[:, :, None] * E[:, None, :]                  # (k, n, C)
        s1W += gW.sum(0)
        s2W += (gW * gW).sum(0)
        s1V += gV.sum(0)
        s2V += (gV * gV).sum(0)
        done += k
    mW, mV = s1W / n_samples, s1V / n_samples
    seW = np.sqrt(np.maximum(s2W - n_samples * mW**2, 0.0) / (n_samples - 1) / n_samples)
    seV = np.sqrt(np.maximum(s2V - n_samples * mV**2, 0.0) / (n_samples - 1) / n_samples)
    return mW, mV, seW, seV


def population_flow(W0, V0, W_star, V_star, t, *, train_v: bool = True, sigma: float = 1.0,
                    rtol: float = 1e-9, atol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the gradient flow of :func:`population_gradient` to the times ``t``.

    ``train_v=False`` holds the fan-outs ``V`` fixed (the reading of eq. 10 in which the
    coefficients ``α_jk``, ``β_k'k`` are given). Returns ``W(t)`` of shape (T, d, n) and
    ``V(t)`` of shape (T, n, C). In the full flow ``‖v_k‖² − ‖w_k‖²`` is conserved for every
    node (Tian eqs. 7 and 8 have the same right-hand side). A node that shrinks to
    ``w_k = 0`` (possible when ``‖v_k‖ ≥ ‖w_k‖`` or with ``V`` fixed) makes the flow singular:
    then a ``FloatingPointError`` asks for a shorter ``t``.

    References
    ----------
    Tian (2020), eqs. 7–8 (equal right-hand sides: the conserved ``‖v_k‖² − ‖w_k‖²``).
    """
    W0, V0, Wt, Vt = _flow_args(W0, V0, W_star, V_star, vname="V0")
    t = V.array("t", t, ndim=1)
    if t.size == 0 or np.any(np.diff(t) < 0) or t[0] < 0:
        raise ValueError("t must be a non-empty, non-decreasing array of times >= 0")
    d, n = W0.shape
    nw = d * n

    floor = 1e-8 * np.linalg.norm(W0, axis=0).min()

    def rhs(_, y):
        Wy = y[:nw].reshape(d, n)
        if np.linalg.norm(Wy, axis=0).min() < floor:
            raise FloatingPointError("a student node collapsed to w_k = 0, where the flow is "
                                     "singular (its direction is undefined): shorten t")
        dW, dV = population_gradient(Wy, y[nw:].reshape(V0.shape), Wt, Vt, sigma=sigma)
        return np.r_[dW.ravel(), dV.ravel() if train_v else np.zeros(dV.size)]

    y0 = np.r_[W0.ravel(), V0.ravel()]
    if t[-1] == 0:
        Y = np.tile(y0, (t.size, 1))
    else:
        sol = integrate.solve_ivp(rhs, (0.0, float(t[-1])), y0, t_eval=t, rtol=rtol, atol=atol,
                                  method="DOP853")
        if not sol.success:  # pragma: no cover
            raise RuntimeError(sol.message)
        Y = sol.y.T
    return Y[:, :nw].reshape(t.size, d, n), Y[:, nw:].reshape((t.size,) + V0.shape)
