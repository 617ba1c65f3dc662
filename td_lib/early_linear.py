"""Early-time linear learning of a two-layer network at standard initialisation.

Implements the setting of Hu, Xiao, Adlam & Pennington (2020), "The surprising simplicity of
the early-time learning dynamics of neural networks" (seed ``002``), whose display equations
were lost in the seed dump; the formulas below are re-derived in the notebook
``td2_7_1b_early_time_linear`` and checked numerically in ``tests/test_early_linear.py``.
Equation numbers (1)-(11) follow the paper's numbering as far as the dump shows it.

* (1) the network ``f(x; W, v) = m^{-1/2} sum_r v_r phi(w_r . x / sqrt(d))``;
* (2) the loss ``L = (1/2n) sum_i (f(x_i) - y_i)^2``;
* (3) the symmetric initialisation: ``w_r ~ N(0, I_d)``, ``v_r`` uniform on ``{+-1}`` for
  ``r <= m/2``, and ``w_{r+m/2} = w_r``, ``v_{r+m/2} = -v_r`` (so ``f = 0`` at ``t = 0``);
* (4) full-batch gradient descent with step ``eta1`` on ``W`` and ``eta2`` on ``v``;
* Assumption 3.1: ``x = Sigma^{1/2} xbar``, ``xbar`` with independent, zero-mean,
  unit-variance subgaussian entries, ``tr Sigma = d`` and ``||Sigma|| = O(1)``;
* (5) the first-layer linear model ``beta . psi1(x)``, ``psi1(x) = d^{-1/2} (zeta x, nu)``;
* (9) the second-layer linear model ``gamma . psi2(x)``,
  ``psi2(x) = (d^{-1/2} zeta x, (2d)^{-1/2} nu, q(x))`` with
  ``q(x) = theta0 + theta1 e + theta2 e^2``, ``e = ||x|| / sqrt(d) - 1``;
* (11) the both-layer linear model ``delta . (psi1(x), psi2(x))``.

With Hermite coefficients ``c_k = E[phi(g) He_k(g)] = E[phi^(k)(g)]``, ``g ~ N(0, 1)``:
``zeta = c_1``, ``nu = c_2 sqrt(tr(Sigma^2) / d)``, ``theta0 = c_0``, ``theta1 = c_2``,
``theta2 = (c_2 + c_4) / 2``.

Every function here is general library code; the notebook's exercises ask for the
student's own implementation and compare behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse.linalg import eigsh

from td_lib import _validate as V
from td_lib.runtime import progress

__all__ = [
    "ACTIVATIONS",
    "LinearConstants",
    "activation",
    "gaussian_expectation",
    "hermite_coefficients",
    "linear_constants",
    "make_data",
    "teacher_labels",
    "symmetric_init",
    "network_output",
    "ntk_at_init",
    "linear_features",
    "linear_kernel",
    "train_network",
    "train_linear_model",
    "kernel_gd_predictions",
    "time_scale",
    "spectral_norm",
    "spectral_distance",
    "lemma_sweep",
    "agreement_run",
]

LAYERS = ("first", "second", "both")

# ---------------------------------------------------------------------------------------
# activations: (phi, phi') as torch functions; numpy arrays are accepted through _np().
# ---------------------------------------------------------------------------------------

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * z * (1.0 + torch.erf(z / _SQRT2))


def _dgelu(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * (1.0 + torch.erf(z / _SQRT2)) + z * torch.exp(-0.5 * z * z) * _INV_SQRT2PI


def _drelu(z: torch.Tensor) -> torch.Tensor:
    return (z > 0).to(z.dtype)


def _leaky(z: torch.Tensor) -> torch.Tensor:
    return torch.where(z > 0, z, 0.2 * z)


def _dleaky(z: torch.Tensor) -> torch.Tensor:
    return torch.where(z > 0, torch.ones_like(z), torch.full_like(z, 0.2))


def _dtanh(z: torch.Tensor) -> torch.Tensor:
    return 1.0 - torch.tanh(z) ** 2


ACTIVATIONS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor],
                             Callable[[torch.Tensor], torch.Tensor]]] = {
    "relu": (torch.relu, _drelu),
    "leaky_relu": (_leaky, _dleaky),
    "gelu": (_gelu, _dgelu),
    "tanh": (torch.tanh, _dtanh),
    "softplus": (torch.nn.functional.softplus, torch.sigmoid),
}
"""Activations of Assumption 3.2 (smooth, or piecewise linear), as ``(phi, phi')``."""


def activation(act: str) -> tuple[Callable[[torch.Tensor], torch.Tensor],
                                  Callable[[torch.Tensor], torch.Tensor]]:
    """Return ``(phi, phi')`` for the activation named ``act`` (a key of ``ACTIVATIONS``)."""
    V.choice("act", act, list(ACTIVATIONS))
    return ACTIVATIONS[act]


# Gauss-Legendre nodes on [-L, 0] and [0, L]: exact enough for E[h(g)] when h is smooth
# on each half-line (ReLU's kink and the jump of its derivative sit at 0).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(160)
_L = 14.0


def gaussian_expectation(h: Callable[[np.ndarray], np.ndarray]) -> float:
    """``E[h(g)]`` for ``g ~ N(0, 1)``, by Gauss-Legendre quadrature on each half-line.

    ``h`` must accept a numpy array (vectorised). Accurate to ~1e-14 for functions smooth on
    ``(-inf, 0]`` and ``[0, inf)`` that grow at most polynomially.
    """
    total = 0.0
    for a, b in ((-_L, 0.0), (0.0, _L)):
        x = 0.5 * (b - a) * _GL_X + 0.5 * (b + a)
        w = 0.5 * (b - a) * _GL_W
        total += float(np.sum(w * np.asarray(h(x), dtype=float) * np.exp(-0.5 * x * x)))
    return total * _INV_SQRT2PI


def _np(f: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: f(torch.as_tensor(x, dtype=torch.float64)).numpy()


_HERMITE = (
    lambda x: np.ones_like(x),
    lambda x: x,
    lambda x: x**2 - 1.0,
    lambda x: x**3 - 3.0 * x,
    lambda x: x**4 - 6.0 * x**2 + 3.0,
)


def hermite_coefficients(act: str, kmax: int = 4) -> np.ndarray:
    """Probabilists' Hermite coefficients ``c_k = E[phi(g) He_k(g)]``, ``k = 0..kmax``.

    By Stein's lemma ``c_k = E[phi^(k)(g)]`` (in the weak sense for ReLU), so ``c_1 = zeta``
    is the mean slope and ``c_2`` the mean curvature of the activation.
    """
    kmax = V.positive_int("kmax", kmax, minimum=0)
    if kmax > 4:
        raise ValueError(f"kmax must be <= 4, got {kmax}")
    phi = _np(activation(act)[0])
    return np.array([gaussian_expectation(lambda x, k=k: phi(x) * _HERMITE[k](x))
                     for k in range(kmax + 1)])


@dataclass(frozen=True)
class LinearConstants:
    """Constants of the linear models (5) and (9) for one activation and one ``Sigma``.

    ``zeta = E phi'(g)``, ``nu = E phi''(g) sqrt(tr(Sigma^2)/d)``, ``theta0 = E phi(g)``,
    ``theta1 = E[g phi'(g)]``, ``theta2 = E[g^2 phi''(g)] / 2``. ``diag1 = E phi'(g)^2 - zeta^2``
    and ``diag2 = E phi(g)^2 - theta0^2 - zeta^2`` are the weights of the identity parts of the
    infinite-width NTKs that the linear models leave out (norm O(1) against O(n/d)).
    """

    zeta: float
    nu: float
    theta0: float
    theta1: float
    theta2: float
    diag1: float
    diag2: float


def linear_constants(act: str, tr_sigma2_over_d: float = 1.0) -> LinearConstants:
    """The constants of the linear models (5), (9) from the Hermite expansion of ``phi``.

    Parameters
    ----------
    act : str
        Activation name (a key of ``ACTIVATIONS``).
    tr_sigma2_over_d : float
        ``tr(Sigma^2) / d`` of the input covariance (1 for isotropic data).
    """
    t2 = V.finite("tr_sigma2_over_d", tr_sigma2_over_d, positive=True)
    c = hermite_coefficients(act, 4)
    phi, dphi = (_np(f) for f in activation(act))
    e_dphi2 = gaussian_expectation(lambda x: dphi(x) ** 2)
    e_phi2 = gaussian_expectation(lambda x: phi(x) ** 2)
    return LinearConstants(
        zeta=float(c[1]), nu=float(c[2] * math.sqrt(t2)), theta0=float(c[0]),
        theta1=float(c[2]), theta2=float(0.5 * (c[2] + c[4])),
        diag1=float(e_dphi2 - c[1] ** 2), diag2=float(e_phi2 - c[0] ** 2 - c[1] ** 2))


# ---------------------------------------------------------------------------------------
# data (Assumption 3.1) and labels
# ---------------------------------------------------------------------------------------

def make_data(n: int, d: int, *, spectrum: Sequence[float] | np.ndarray | str = "ramp",
              entries: str = "gaussian", rotate: bool = True,
              seed: int | np.random.Generator = 0) -> tuple[np.ndarray, np.ndarray]:
    """Inputs satisfying Assumption 3.1: ``x = Sigma^{1/2} xbar``.

    Parameters
    ----------
    n, d : int
        Number of points and input dimension.
    spectrum : array of length ``d``, ``"flat"`` or ``"ramp"``
        Eigenvalues of ``Sigma`` before normalisation to ``tr Sigma = d``. ``"ramp"`` spaces
        them linearly in ``[0.5, 1.5]`` (so ``||Sigma|| <= 1.5``), ``"flat"`` gives ``I``.
    entries : ``"gaussian"`` or ``"rademacher"``
        Law of the independent unit-variance entries of ``xbar``.
    rotate : bool
        Use ``Sigma = U diag(lambda) U^T`` with a random orthogonal ``U`` (otherwise diagonal).
    seed : int or numpy Generator

    Returns
    -------
    X : (n, d) array
    sigma : (d, d) array, the covariance ``Sigma`` (``tr Sigma = d``).
    """
    n = V.positive_int("n", n)
    d = V.positive_int("d", d)
    V.choice("entries", entries, ["gaussian", "rademacher"])
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if isinstance(spectrum, str):
        V.choice("spectrum", spectrum, ["flat", "ramp"])
        lam = np.ones(d) if spectrum == "flat" or d == 1 else np.linspace(0.5, 1.5, d)
    else:
        lam = V.array("spectrum", spectrum, shape=(d,))
        if np.any(lam <= 0):
            raise ValueError("spectrum must be positive")
    lam = lam * d / lam.sum()
    if entries == "gaussian":
        xbar = rng.standard_normal((n, d))
    else:
        xbar = rng.choice(np.array([-1.0, 1.0]), size=(n, d))
    if rotate:
        u, _ = np.linalg.qr(rng.standard_normal((d, d)))
    else:
        u = np.eye(d)
    root = (u * np.sqrt(lam)) @ u.T
    return xbar @ root, (u * lam) @ u.T


def teacher_labels(X: np.ndarray, sigma: np.ndarray, *, linear: float = 1.0,
                   quadratic: float = 1.0, seed: int | np.random.Generator = 1) -> np.ndarray:
    """Labels ``y = a_1 b.x / s_b + a_2 ((u.x)^2 - s_u^2) / (sqrt(2) s_u^2)``.

    ``b`` and ``u`` are random orthonormal directions, ``s_b^2 = b' Sigma b``,
    ``s_u^2 = u' Sigma u``; for Gaussian inputs each part has unit variance, so ``linear`` and
    ``quadratic`` set how much of the label a linear model can explain
    (``a_1^2 / (a_1^2 + a_2^2)``).
    """
    X = V.array("X", X, ndim=2)
    d = X.shape[1]
    sigma = V.array("sigma", sigma, shape=(d, d))
    a1 = V.finite("linear", linear)
    a2 = V.finite("quadratic", quadratic)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    b, u = q[:, 0], q[:, 1]
    sb2, su2 = b @ sigma @ b, u @ sigma @ u
    return a1 * (X @ b) / math.sqrt(sb2) + a2 * ((X @ u) ** 2 - su2) / (math.sqrt(2) * su2)


# ---------------------------------------------------------------------------------------
# the network (1), its symmetric initialisation (3), its NTK at initialisation
# ---------------------------------------------------------------------------------------

def symmetric_init(d: int, m: int, *, runs: int | None = None,
                   seed: int | torch.Generator = 0,
                   dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric initialisation (3): ``W`` of shape ``(m, d)``, ``v`` of shape ``(m,)``.

    Rows ``r < m/2`` have ``w_r ~ N(0, I_d)`` and ``v_r = +-1``; row ``r + m/2`` copies ``w_r``
    with ``v_{r+m/2} = -v_r``, so the network output is exactly 0 at initialisation. With
    ``runs`` an integer, a leading axis of independent initialisations is added.
    """
    d = V.positive_int("d", d)
    m = V.positive_int("m", m, minimum=2)
    if m % 2:
        raise ValueError(f"m must be even for the symmetric initialisation, got {m}")
    r = 1 if runs is None else V.positive_int("runs", runs)
    gen = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(int(seed))
    w = torch.randn(r, m // 2, d, generator=gen, dtype=dtype)
    s = torch.randint(0, 2, (r, m // 2), generator=gen).to(dtype) * 2 - 1
    W = torch.cat([w, w], dim=1)
    v = torch.cat([s, -s], dim=1)
    return (W[0], v[0]) if runs is None else (W, v)


def network_output(X: torch.Tensor | np.ndarray, W: torch.Tensor, v: torch.Tensor,
                   act: str = "relu") -> torch.Tensor:
    """Network (1): ``f(x) = m^{-1/2} sum_r v_r phi(w_r . x / sqrt(d))``.

    ``W`` is ``(m, d)`` or ``(R, m, d)`` with ``v`` of matching shape ``(m,)`` / ``(R, m)``;
    returns ``(n,)`` or ``(R, n)``.
    """
    phi = activation(act)[0]
    X = torch.as_tensor(X, dtype=W.dtype)
    if X.ndim != 2 or X.shape[1] != W.shape[-1]:
        raise ValueError(f"X must have shape (n, {W.shape[-1]}), got {tuple(X.shape)}")
    if v.shape != W.shape[:-1]:
        raise ValueError(f"v must have shape {tuple(W.shape[:-1])}, got {tuple(v.shape)}")
    d, m = W.shape[-1], W.shape[-2]
    z = torch.matmul(X, W.transpose(-1, -2)) / math.sqrt(d)
    return torch.matmul(phi(z), v.unsqueeze(-1)).squeeze(-1) / math.sqrt(m)


def ntk_at_init(X: np.ndarray | torch.Tensor, W: torch.Tensor, v: torch.Tensor,
                act: str = "relu", layers: str = "both",
                X2: np.ndarray | torch.Tensor | None = None,
                block: int = 4096) -> np.ndarray:
    """Empirical NTK of network (1) (eqs. of App. D.2), ``Theta(X, X2)`` as a numpy array.

    ``Theta1(x, x') = (x.x'/d) (1/m) sum_r v_r^2 phi'(w_r.x/sqrt d) phi'(w_r.x'/sqrt d)``,
    ``Theta2(x, x') = (1/m) sum_r phi(w_r.x/sqrt d) phi(w_r.x'/sqrt d)``, and
    ``Theta = Theta1 + Theta2`` for ``layers="both"``. Neurons are summed in blocks of
    ``block`` to bound memory.
    """
    V.choice("layers", layers, LAYERS)
    if W.ndim != 2:
        raise ValueError(f"W must have shape (m, d), got {tuple(W.shape)}")
    phi, dphi = activation(act)
    Xa = torch.as_tensor(X, dtype=W.dtype)
    Xb = Xa if X2 is None else torch.as_tensor(X2, dtype=W.dtype)
    m, d = W.shape
    for name, A in (("X", Xa), ("X2", Xb)):
        if A.ndim != 2 or A.shape[1] != d:
            raise ValueError(f"{name} must have shape (n, {d}), got {tuple(A.shape)}")
    K1 = torch.zeros(Xa.shape[0], Xb.shape[0], dtype=W.dtype)
    K2 = torch.zeros_like(K1)
    for s in range(0, m, block):
        Wb, vb = W[s:s + block], v[s:s + block]
        za, zb = Xa @ Wb.T / math.sqrt(d), Xb @ Wb.T / math.sqrt(d)
        if layers in ("first", "both"):
            K1 += (dphi(za) * vb**2) @ dphi(zb).T
        if layers in ("second", "both"):
            K2 += phi(za) @ phi(zb).T
    K1 = K1 / m * (Xa @ Xb.T) / d
    K2 = K2 / m
    out = {"first": K1, "second": K2, "both": K1 + K2}[layers]
    return out.numpy()


# ---------------------------------------------------------------------------------------
# the linear models (5), (9), (11)
# ---------------------------------------------------------------------------------------

def linear_features(X: np.ndarray, c: LinearConstants, layers: str = "both") -> np.ndarray:
    """Feature map of the linear model (5) ``psi1``, (9) ``psi2`` or (11) ``psi = (psi1, psi2)``.

    ``psi1(x) = d^{-1/2} (zeta x, nu)``;
    ``psi2(x) = (d^{-1/2} zeta x, (2d)^{-1/2} nu, theta0 + theta1 e + theta2 e^2)``
    with ``e = ||x||/sqrt(d) - 1``. Returns ``(n, d+1)``, ``(n, d+2)`` or ``(n, 2d+3)``.
    """
    V.choice("layers", layers, LAYERS)
    X = V.array("X", X, ndim=2)
    n, d = X.shape
    one = np.ones((n, 1))
    psi1 = np.hstack([c.zeta * X, c.nu * one]) / math.sqrt(d)
    e = np.linalg.norm(X, axis=1, keepdims=True) / math.sqrt(d) - 1.0
    q = c.theta0 + c.theta1 * e + c.theta2 * e**2
    psi2 = np.hstack([c.zeta * X / math.sqrt(d), c.nu * one / math.sqrt(2 * d), q])
    return {"first": psi1, "second": psi2, "both": np.hstack([psi1, psi2])}[layers]


def linear_kernel(X: np.ndarray, c: LinearConstants, layers: str = "both",
                  X2: np.ndarray | None = None) -> np.ndarray:
    """Kernel ``<psi(x), psi(x')>`` of the linear model (5), (9) or (11).

    ``K1 = (zeta^2 x.x' + nu^2)/d``, ``K2 = (zeta^2 x.x' + nu^2/2)/d + q(x) q(x')``,
    ``K = K1 + K2``.
    """
    A = linear_features(X, c, layers)
    B = A if X2 is None else linear_features(X2, c, layers)
    return A @ B.T


# ---------------------------------------------------------------------------------------
# training: the network by GD (4), the linear models by GD from zero
# ---------------------------------------------------------------------------------------

def _checkpoints(checkpoints: Sequence[int]) -> np.ndarray:
    t = np.asarray(checkpoints)
    if t.ndim != 1 or t.size == 0 or not np.issubdtype(t.dtype, np.integer):
        raise TypeError("checkpoints must be a non-empty 1-d sequence of integers")
    if np.any(t < 0) or np.any(np.diff(t) <= 0):
        raise ValueError("checkpoints must be non-negative and strictly increasing")
    return t.astype(int)


def train_network(X: np.ndarray, y: np.ndarray, W0: torch.Tensor, v0: torch.Tensor, *,
                  act: str = "relu", eta: float = 1.0, layers: str = "both",
                  checkpoints: Sequence[int] = (0, 1, 10, 100),
                  X_test: np.ndarray | None = None, desc: str | None = None) -> dict:
    """Full-batch GD (4) on loss (2) for network (1), vectorised over runs.

    ``W0`` is ``(m, d)`` or ``(R, m, d)`` (independent runs on the same data), ``v0`` matches.
    ``layers`` selects which layers move (``eta1 = eta`` and/or ``eta2 = eta``). Gradients are
    written out: ``dL/dv_r = (1/n) sum_i r_i phi(z_ir)/sqrt m`` and
    ``dL/dw_r = (1/n) sum_i r_i v_r phi'(z_ir) x_i / sqrt(m d)``, ``r_i = f(x_i) - y_i``.

    Returns a dict with ``t`` (checkpoints), ``train`` (``(T, n)`` or ``(T, R, n)``
    predictions), ``test`` (same on ``X_test``, if given), ``loss`` (train loss (2)) and
    ``dW`` (``||W(t) - W(0)||_F``).
    """
    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    ts = _checkpoints(checkpoints)
    phi, dphi = activation(act)
    dt = W0.dtype
    single = W0.ndim == 2
    W = (W0.unsqueeze(0) if single else W0).clone()
    v = (v0.unsqueeze(0) if single else v0).clone()
    if W.ndim != 3 or v.shape != W.shape[:2]:
        raise ValueError(f"W0/v0 shapes do not match: {tuple(W0.shape)}, {tuple(v0.shape)}")
    Xt = torch.as_tensor(V.array("X", X, ndim=2), dtype=dt)
    n, d = Xt.shape
    if d != W.shape[2]:
        raise ValueError(f"X must have {W.shape[2]} columns, got {d}")
    yt = torch.as_tensor(V.array("y", y, shape=(n,)), dtype=dt)
    Xs = None if X_test is None else torch.as_tensor(V.array("X_test", X_test, ndim=2), dtype=dt)
    m = W.shape[1]
    sm, sd = math.sqrt(m), math.sqrt(d)
    W_init = W.clone()
    out: dict[str, list] = {"train": [], "test": [], "loss": [], "dW": []}

    def record(f_train: torch.Tensor) -> None:
        out["train"].append(f_train.clone())
        out["loss"].append(0.5 * ((f_train - yt) ** 2).mean(-1))
        out["dW"].append(torch.linalg.norm((W - W_init).flatten(1), dim=1))
        if Xs is not None:
            zs = torch.matmul(Xs, W.transpose(1, 2)) / sd
            out["test"].append(torch.matmul(phi(zs), v.unsqueeze(-1)).squeeze(-1) / sm)

    it = range(int(ts[-1]) + 1)
    if desc is not None:
        it = progress(it, desc=desc)
    k = 0
    for step in it:
        z = torch.matmul(Xt, W.transpose(1, 2)) / sd            # (R, n, m)
        a = phi(z)
        f = torch.matmul(a, v.unsqueeze(-1)).squeeze(-1) / sm   # (R, n)
        if k < len(ts) and step == ts[k]:
            record(f)
            k += 1
            if k == len(ts):
                continue  # last checkpoint recorded: no further update needed
        r = (f - yt) / n                                        # (R, n)
        if layers in ("first", "both"):
            g = dphi(z) * r.unsqueeze(-1) * (v / sm).unsqueeze(1)   # (R, n, m)
            gW = torch.matmul(g.transpose(1, 2), Xt) / sd
        if layers in ("second", "both"):
            gv = torch.matmul(a.transpose(1, 2), r.unsqueeze(-1)).squeeze(-1) / sm
            v = v - eta * gv
        if layers in ("first", "both"):
            W = W - eta * gW
    res = {"t": ts}
    for key, val in out.items():
        if val:
            arr = torch.stack(val).numpy()
            res[key] = arr[:, 0] if single else arr
    return res


def _gd_filter(s2: np.ndarray, eta_over_n: float, t: np.ndarray) -> np.ndarray:
    """``(1 - (1 - a)^t) / s2`` with ``a = eta s2 / n`` (``t eta/n`` as ``s2 -> 0``), shape (T, k)."""
    a = eta_over_n * s2
    if np.any(a >= 2):
        raise ValueError(f"eta too large: eta * lambda_max / n = {a.max():.3g} >= 2 (GD diverges)")
    small = s2 <= 1e-13 * max(1.0, float(s2.max(initial=0.0)))
    safe = np.where(small, 1.0, s2)
    val = -np.expm1(t[:, None] * np.log1p(-a)[None, :]) / safe[None, :]
    return np.where(small[None, :], t[:, None] * eta_over_n, val)


def train_linear_model(X: np.ndarray, y: np.ndarray, c: LinearConstants, *,
                       layers: str = "both", eta: float = 1.0,
                       checkpoints: Sequence[int] = (0, 1, 10, 100),
                       X_test: np.ndarray | None = None) -> dict:
    """GD from zero on ``(1/2n) sum_i (beta . psi(x_i) - y_i)^2`` for the linear model (5)/(9)/(11).

    The iterates are ``beta(t+1) = beta(t) - (eta/n) Psi^T (Psi beta(t) - y)``, evaluated in
    closed form: with ``Psi = U S V^T``, ``beta(t) = V diag((1 - (1 - eta s^2/n)^t)/s) U^T y``.
    Returns ``t``, ``beta`` (``(T, p)``), ``train`` and ``test`` predictions and ``loss``.
    """
    ts = _checkpoints(checkpoints)
    eta = V.finite("eta", eta, positive=True)
    X = V.array("X", X, ndim=2)
    y = V.array("y", y, shape=(X.shape[0],))
    psi = linear_features(X, c, layers)
    n = X.shape[0]
    U, s, Vt = np.linalg.svd(psi, full_matrices=False)
    filt = _gd_filter(s**2, eta / n, ts) * s[None, :]          # (T, k)
    beta = (filt * (U.T @ y)[None, :]) @ Vt
    res = {"t": ts, "beta": beta, "train": beta @ psi.T}
    res["loss"] = 0.5 * ((res["train"] - y[None, :]) ** 2).mean(1)
    if X_test is not None:
        res["test"] = beta @ linear_features(X_test, c, layers).T
    return res


def kernel_gd_predictions(K: np.ndarray, y: np.ndarray, eta: float,
                          checkpoints: Sequence[int], K_test: np.ndarray | None = None
                          ) -> dict:
    """Kernel GD from ``u(0) = 0``: ``u(t+1) = u(t) - (eta/n) K (u(t) - y)``.

    The training predictions are ``u(t) = Q diag(1 - (1 - eta lambda/n)^t) Q^T y`` for
    ``K = Q diag(lambda) Q^T``; test predictions are ``K_test alpha(t)`` with
    ``alpha(t) = Q diag((1 - (1 - eta lambda/n)^t)/lambda) Q^T y``. This is GD on any linear
    model with kernel ``K`` (the NTK-linearised network, or (5), (9), (11)).
    """
    ts = _checkpoints(checkpoints)
    eta = V.finite("eta", eta, positive=True)
    K = V.array("K", K, ndim=2)
    n = K.shape[0]
    y = V.array("y", y, shape=(n,))
    lam, Q = np.linalg.eigh(0.5 * (K + K.T))
    lam = np.clip(lam, 0.0, None)
    filt = _gd_filter(lam, eta / n, ts)                          # (T, n)
    alpha = (filt * (Q.T @ y)[None, :]) @ Q.T
    res = {"t": ts, "train": alpha @ K.T}
    res["loss"] = 0.5 * ((res["train"] - y[None, :]) ** 2).mean(1)
    if K_test is not None:
        res["test"] = alpha @ V.array("K_test", K_test, shape=(None, n)).T
    return res


# ---------------------------------------------------------------------------------------
# scales and norms
# ---------------------------------------------------------------------------------------

def time_scale(d: int, eta: float) -> float:
    """The paper's time scale ``T = d log d / eta`` (Theorems 3.2, 3.5, D.1 hold for ``t <= cT``)."""
    d = V.positive_int("d", d, minimum=2)
    eta = V.finite("eta", eta, positive=True)
    return d * math.log(d) / eta


def spectral_norm(A: np.ndarray, *, exact_below: int = 600) -> float:
    """Spectral norm ``max |lambda|`` of a symmetric matrix.

    Dense ``eigvalsh`` for ``n <= exact_below``; Lanczos (``eigsh``, relative tol 1e-10)
    above, which needs only matrix-vector products.
    """
    A = V.array("A", A, ndim=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square, got shape {A.shape}")
    A = 0.5 * (A + A.T)
    if A.shape[0] <= exact_below:
        return float(np.abs(np.linalg.eigvalsh(A)).max())
    v0 = np.ones(A.shape[0]) / math.sqrt(A.shape[0])
    val = eigsh(A, k=1, which="LM", return_eigenvectors=False, tol=1e-10, v0=v0)
    return float(abs(val[0]))


def spectral_distance(A: np.ndarray, B: np.ndarray, *, relative: bool = False) -> float:
    """``||A - B||_2`` for symmetric kernels (``relative``: divided by ``||B||_2``)."""
    A = V.array("A", A, ndim=2)
    B = V.array("B", B, shape=A.shape)
    dist = spectral_norm(A - B)
    return dist / spectral_norm(B) if relative else dist


# ---------------------------------------------------------------------------------------
# the two experiments of the notebook (shared with checks/lf_7_1b.py, so the quoted numbers
# are recomputed from the same seeds)
# ---------------------------------------------------------------------------------------

def lemma_sweep(ds: Sequence[int], *, act: str = "gelu", alpha: float = 0.25,
                n_factor: float = 2.0, seed: int = 0, desc: str | None = None) -> dict:
    """Distance between the network's NTK at initialisation and the linear models' kernels.

    For each ``d`` in ``ds``: ``n = m = 2 round(n_factor d^{1+alpha} / 2)`` (the paper's
    regime ``n, m >~ d^{1+alpha}``), data from ``make_data`` (ramp spectrum, Gaussian entries),
    the symmetric initialisation, and the relative spectral distances

    * ``rel1``: ``||Theta1 - K1|| / ||K1||`` (Prop. 3.4, first layer);
    * ``rel1_id``: the same with the identity part ``diag1 I`` added to ``K1``;
    * ``rel1_nonu``: the same with ``nu = 0`` (the constant feature left out);
    * ``frob1``: ``||Theta1 - K1||_F / ||K1||_2`` (a Frobenius-norm distance, not small);
    * ``rel``: ``||Theta - K|| / ||K||`` for both layers (``Theta = Theta1 + Theta2``).
    """
    ds = [V.positive_int("ds", d, minimum=2) for d in ds]
    alpha = V.in_interval("alpha", alpha, 0.0, 1.0, closed="both")
    n_factor = V.finite("n_factor", n_factor, positive=True)
    keys = ("rel1", "rel1_id", "rel1_nonu", "frob1", "rel")
    out: dict[str, list] = {k: [] for k in ("d", "n", *keys)}
    it = progress(ds, desc=desc) if desc is not None else ds
    for i, d in enumerate(it):
        n = max(2, 2 * int(round(n_factor * d ** (1 + alpha) / 2)))
        X, S = make_data(n, d, seed=seed + 1000 * i)
        W, v = symmetric_init(d, n, seed=seed + 1000 * i + 1)
        c = linear_constants(act, float(np.trace(S @ S)) / d)
        T1 = ntk_at_init(X, W, v, act, "first")
        T2 = ntk_at_init(X, W, v, act, "second")
        K1, K2 = linear_kernel(X, c, "first"), linear_kernel(X, c, "second")
        nK1 = spectral_norm(K1)
        c0 = LinearConstants(**{**c.__dict__, "nu": 0.0})
        out["d"].append(d)
        out["n"].append(n)
        out["rel1"].append(spectral_norm(T1 - K1) / nK1)
        out["rel1_id"].append(spectral_norm(T1 - K1 - c.diag1 * np.eye(n)) / nK1)
        out["rel1_nonu"].append(spectral_norm(T1 - linear_kernel(X, c0, "first")) / nK1)
        out["frob1"].append(float(np.linalg.norm(T1 - K1)) / nK1)
        out["rel"].append(spectral_norm(T1 + T2 - K1 - K2) / spectral_norm(K1 + K2))
    res = {k: np.asarray(v) for k, v in out.items()}
    logd = np.log(res["d"])
    for k in keys:
        res["slope_" + k] = float(np.polyfit(logd, np.log(res[k]), 1)[0]) if len(ds) > 1 \
            else float("nan")
    return res


def agreement_run(d: int, *, act: str = "relu", layers: str = "first",
                  eta: float | None = None, n_per_d: int = 12, n_test: int = 400,
                  t_max: float = 16.0, n_checkpoints: int = 30, seed: int = 0,
                  desc: str | None = None) -> dict:
    """Train network (1) and the matching linear model on the same data; compare predictions.

    ``n = m = n_per_d * d``; labels ``y = y_lin + y_quad`` from ``teacher_labels`` (a linear
    and a quadratic part of unit variance each). ``eta`` defaults to ``d/8`` for
    ``layers="first"`` (the paper needs ``eta1 << d``) and to 1 otherwise. Checkpoints are
    log-spaced up to ``t_max * T`` with ``T = d log d / eta``.

    Returns a dict with ``t``, ``t_over_T``, ``T``, the relative RMS differences
    ``rel_train``/``rel_test`` (``||f_net - f_lin|| / ||f_lin||``), the losses ``loss_net``,
    ``loss_lin`` (train) and ``test_net``, ``test_lin``, ``test_best_lin`` (test loss of the
    converged linear model), and the overlaps ``lin_net``, ``quad_net``, ``lin_lin``,
    ``quad_lin`` of the predictions with ``y_lin`` and ``y_quad`` on the test set
    (``E[f y_part] / E[y_part^2]``).
    """
    d = V.positive_int("d", d, minimum=2)
    V.choice("layers", layers, LAYERS)
    eta = (d / 8 if layers == "first" else 1.0) if eta is None else V.finite("eta", eta,
                                                                             positive=True)
    n = V.positive_int("n_per_d", n_per_d) * d
    n_test = V.positive_int("n_test", n_test)
    T = time_scale(d, eta)
    t_end = max(2, int(round(V.finite("t_max", t_max, positive=True) * T)))
    ts = np.unique(np.round(np.logspace(0, math.log10(t_end),
                                        V.positive_int("n_checkpoints", n_checkpoints))))
    ts = np.concatenate([[0], ts.astype(int)])
    X, S = make_data(n + n_test, d, seed=seed)
    y_lin = teacher_labels(X, S, linear=1.0, quadratic=0.0, seed=seed + 1)
    y_quad = teacher_labels(X, S, linear=0.0, quadratic=1.0, seed=seed + 1)
    y = y_lin + y_quad
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    c = linear_constants(act, float(np.trace(S @ S)) / d)
    W, v = symmetric_init(d, n, seed=seed + 2, dtype=torch.float32)
    net = train_network(Xtr, ytr, W, v, act=act, eta=eta, layers=layers, checkpoints=ts,
                        X_test=Xte, desc=desc)
    lin = train_linear_model(Xtr, ytr, c, layers=layers, eta=eta, checkpoints=ts, X_test=Xte)
    psi, psi_te = linear_features(Xtr, c, layers), linear_features(Xte, c, layers)
    beta_star = np.linalg.lstsq(psi, ytr, rcond=None)[0]

    def rms(a: np.ndarray) -> np.ndarray:
        return np.sqrt(np.mean(a**2, axis=-1))

    with np.errstate(invalid="ignore", divide="ignore"):
        rel_train = rms(net["train"] - lin["train"]) / rms(lin["train"])
        rel_test = rms(net["test"] - lin["test"]) / rms(lin["test"])
    rel_train[ts == 0] = np.nan  # both predictions vanish at t = 0
    rel_test[ts == 0] = np.nan
    yl, yq = y_lin[n:], y_quad[n:]
    return {
        "d": d, "n": n, "eta": eta, "T": T, "t": ts, "t_over_T": ts / T,
        "rel_train": rel_train, "rel_test": rel_test,
        "loss_net": net["loss"], "loss_lin": lin["loss"],
        "test_net": 0.5 * np.mean((net["test"] - yte) ** 2, axis=1),
        "test_lin": 0.5 * np.mean((lin["test"] - yte) ** 2, axis=1),
        "test_best_lin": float(0.5 * np.mean((psi_te @ beta_star - yte) ** 2)),
        "lin_net": net["test"] @ yl / (yl @ yl), "quad_net": net["test"] @ yq / (yq @ yq),
        "lin_lin": lin["test"] @ yl / (yl @ yl), "quad_lin": lin["test"] @ yq / (yq @ yq),
    }
