"""Figure 6: which student wins at its own optimal learning rate (Mori et al. §3.4, App. I).

* :func:`phase_diagram` -- ``eps*_CNN / eps*_LCN`` on a grid of correlations ``c`` and training
  horizons ``alpha_F``, each student at the learning rate that is optimal for that horizon;
* :func:`refine_min` -- the parabola through the three grid points around a minimum that
  locates that optimum.

References
----------
Mori et al., *exact online-SGD dynamics of CNN vs LCN students*, Figure 6, eq. 30, App. I.
"""

from __future__ import annotations

import numpy as np

from td_lib.cnn_lcn.init import leading_order_init
from td_lib.cnn_lcn.integrate import integrate
from td_lib.cnn_lcn.model import KINDS, input_covariance
from td_lib.core.validate import library_default

__all__ = ["phase_diagram", "refine_min"]


def refine_min(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of ``y(x)`` on a grid, refined by a parabola through the 3 points around it.

    ``x``: ``(n,)`` equally spaced grid; ``y``: ``(..., n)``. Returns ``(x_min, y_min)`` of
    shape ``(...)``. Where one of the three points is not finite (a diverged or cut-off run,
    ``+inf``) no parabola exists: the grid minimum is returned unrefined (the caller flags
    such entries).

    References
    ----------
    Mori et al. (CNN vs LCN), App. I (optimal learning rate of Figure 6).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0.0, 1.0, 6)
    >>> xm, ym = refine_min(x, (x - 0.33) ** 2 + 1.0)  # exact for a parabola
    >>> round(float(xm), 12), round(float(ym), 12)
    (0.33, 1.0)
    """
    i = np.argmin(y, axis=-1)
    i = np.clip(i, 1, x.size - 2)
    y0 = np.take_along_axis(y, (i - 1)[..., None], -1)[..., 0]
    y1 = np.take_along_axis(y, i[..., None], -1)[..., 0]
    y2 = np.take_along_axis(y, (i + 1)[..., None], -1)[..., 0]
    h = x[1] - x[0]
    fin = np.isfinite(y0) & np.isfinite(y1) & np.isfinite(y2)
    z0, z1, z2 = (np.where(fin, v, 0.0) for v in (y0, y1, y2))  # no inf - inf below
    den = z0 - 2 * z1 + z2
    ok = fin & (den > 0)
    off = np.where(ok, 0.5 * (z0 - z2) / np.where(ok, den, 1.0), 0.0)
    off = np.clip(off, -1, 1)
    ymin = y1 - 0.25 * (z0 - z2) * off
    ymin = np.minimum(ymin, np.minimum(np.minimum(y0, y1), y2))
    return x[i] + off * h, ymin


def _at_optimum(optimal_eta, etas: np.ndarray, le: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ln eta*, ln eps*)`` for each row of ``le`` (``ln eps_g`` on the grid ``etas``, ``+inf`` for
    a diverged or cut-off run), with ``eta* = optimal_eta(etas, errors)`` (``errors``: NaN for
    those runs) and ``ln eps*`` the parabola through the three grid points around the grid
    minimum evaluated at ``ln eta*`` (the grid minimum where one of them is not finite)."""
    x = np.log(etas)
    rows = le.reshape(-1, etas.size)
    with np.errstate(over="ignore"):
        errors = np.where(np.isfinite(rows), np.exp(rows), np.nan)
    xs = np.log(np.array([float(optimal_eta(etas.copy(), e)) for e in errors]))
    i = np.clip(np.argmin(rows, axis=-1), 1, etas.size - 2)
    r = np.arange(rows.shape[0])
    y0, y1, y2 = rows[r, i - 1], rows[r, i], rows[r, i + 1]
    fin = np.isfinite(y0) & np.isfinite(y1) & np.isfinite(y2)
    z0, z1, z2 = (np.where(fin, v, 0.0) for v in (y0, y1, y2))
    t = (xs - x[i]) / (x[1] - x[0])
    ys = np.where(fin, z1 + t * (z2 - z0) / 2 + t**2 * (z0 - 2 * z1 + z2) / 2, rows.min(axis=-1))
    return xs.reshape(le.shape[:-1]), ys.reshape(le.shape[:-1])


def phase_diagram(*, P: int = 4, k_s: int = 1, k_t: int = 1, T: float = 1.0, sigma: float = 1.0,
                  cs=None, alpha_F=None, etas=None, dtau: float = 0.1, tau_max: float = 400.0,
                  steady_tol: float | None = 1e-9, optimal_eta=None, progress: bool | str = False) -> dict:
    """Figure 6: CNN vs LCN at their own optimal learning rate for each horizon ``alpha_F``.

    For each student and correlation ``c`` the ODEs are integrated from the leading-order
    initial state for every learning rate of the grid ``etas`` (one batched integration per
    student); ``eps*(alpha_F) = min_eta eps_g(alpha_F)`` is located by a parabola through
    ``log eps_g`` against ``log eta`` around the grid minimum (App. I).

    A learning rate ``eta`` is integrated only up to ``alpha = tau_max / eta`` (natural time
    ``eta alpha <= tau_max``): larger rates are far from optimal at longer horizons. The
    returned ``clipped`` flags ``(n_c, n_F)`` entries whose optimum touches that cut or the
    grid edge (then enlarge ``tau_max`` or the grid).

    ``optimal_eta(etas, errors) -> eta*`` (optional) locates the optimum instead of the library's
    :func:`refine_min`: it receives the grid and ``eps_g(alpha_F)`` on it (NaN for a diverged or
    cut-off run) for each ``(c, alpha_F)``, and ``eps*`` is the parabola through the three grid
    points around the grid minimum, in ``(ln eta, ln eps_g)``, evaluated at ``ln eta*``.

    Returns a dict with ``cs``, ``alpha_F``, ``etas``, ``eps_cnn``, ``eps_lcn`` (``(n_c, n_F)``),
    ``eta_cnn``, ``eta_lcn`` (optimal eta), ``log10_ratio = log10(eps_cnn / eps_lcn)``,
    ``clipped_cnn``, ``clipped_lcn`` and ``n_steps``.
    Defaults: the paper's c grid (0, 0.025, ..., 0.975), alpha_F = 10^-2..10^4 (25 points),
    eta = 10^-4..3 (41 points). ``progress``: ``True`` or a label shows a bar per student.

    References
    ----------
    Mori et al. (CNN vs LCN), Figure 6 and App. I.

    Examples
    --------
    >>> import numpy as np
    >>> pd = phase_diagram(cs=np.array([0.0]), alpha_F=np.array([0.01]),
    ...                    etas=np.geomspace(0.1, 3.0, 5))
    >>> pd["log10_ratio"].shape, bool(abs(pd["log10_ratio"][0, 0]) < 0.01)  # c = 0: a tie
    ((1, 1), True)
    """
    cs = np.arange(0, 0.976, 0.025) if cs is None else np.asarray(cs, float)
    alpha_F = np.geomspace(1e-2, 1e4, 25) if alpha_F is None else np.asarray(alpha_F, float)
    etas = np.geomspace(1e-4, 3.0, 41) if etas is None else np.asarray(etas, float)
    if optimal_eta is None:
        refine = library_default("refine_min", globals(), "optimal_eta")
    elif callable(optimal_eta):
        refine = None
    else:
        raise TypeError(f"optimal_eta must be callable, got {optimal_eta!r}")
    S = input_covariance(P, cs)[:, None]  # (n_c, 1, P, P)
    out = {"cs": cs, "alpha_F": alpha_F, "etas": etas}
    for kind in KINDS:
        R0, Q0 = leading_order_init(kind, P=P, k_s=k_s, k_t=k_t)
        tr = integrate(kind, R0, Q0, alpha_F, S, T=T, eta=etas[None, :], sigma=sigma,
                       dtau=dtau, steady_tol=steady_tol, on_divergence="nan",
                       alpha_limit=tau_max / etas[None, :], progress=progress)
        with np.errstate(invalid="ignore"):
            le = np.log(np.moveaxis(tr.eg, 0, -1))  # (n_c, n_eta, n_F)
        le = np.moveaxis(le, 1, -1)  # (n_c, n_F, n_eta)
        le = np.where(np.isfinite(le), le, np.inf)
        x, y = refine(np.log(etas), le) if refine is not None else _at_optimum(optimal_eta, etas, le)
        i = np.argmin(le, axis=-1)
        nb = np.stack([np.take_along_axis(le, np.clip(i + d, 0, etas.size - 1)[..., None], -1)[
            ..., 0] for d in (-1, 1)])
        out[f"clipped_{kind}"] = (i == 0) | (i == etas.size - 1) | ~np.all(np.isfinite(nb), 0)
        out[f"eps_{kind}"] = np.exp(y)
        out[f"eta_{kind}"] = np.exp(x)
        out[f"n_steps_{kind}"] = tr.n_steps
    out["log10_ratio"] = np.log10(out["eps_cnn"] / out["eps_lcn"])
    return out
