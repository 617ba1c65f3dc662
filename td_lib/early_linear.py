"""Early-time linear learning of a two-layer network at standard initialisation.

Implements the setting of Hu, Xiao, Adlam & Pennington (2020), "The surprising simplicity of
the early-time learning dynamics of neural networks" (seed ``002``), whose display equations
were lost in the seed dump; the formulas below are re-derived in the notebook
``td2_7_1b_early_time_linear`` and checked numerically in ``tests/test_early_linear.py``.
Equation numbers (1)-(12) follow the paper's numbering as far as the dump shows it.

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
``theta2 = (c_2 + c_4) / 2``. GD from zero on a linear model with feature matrix ``Psi``
relaxes the component along the k-th eigenvector of ``Psi^T Psi / n`` at rate ``eta mu_k``
per step (:func:`linear_mode_rates`); for (5) the linear directions have
``mu_k = zeta^2 lambda_k(Sigma) / d``.

Their §4.1 (eq. (12)) and Prop. 4.1 (App. E): a 1-d CNN with one convolutional layer and no
pooling, ``f(x) = (md)^{-1/2} sum_r sum_k V_rk phi(w_r . [x]_{k:k+q} / sqrt(q))`` (``m``
filters of size ``q``, circular padding), on inputs uniform on the hypercube ``{-1, 1}^d``;
its infinite-width NTK is ``(1/d) sum_k [Gamma(s_k) + s_k Phi(s_k)]`` in the local
correlations ``s_k = [x]_{k:k+q} . [x']_{k:k+q} / q``, close in spectral norm to the linear
kernel ``2 zeta^2 x.x'/d`` plus a constant. The display equations of §4.1 are lost in the dump
too: the CNN, its initialisation and the linear kernel here are reconstructed from App. E
(see :func:`cnn_output`, :func:`cnn_linear_constants`).

Every function here is general library code; the notebook's exercises ask for the
student's own implementation and compare behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from td_lib.core import validate as V
from td_lib.core.runtime import progress

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
    "gd_on_features",
    "linear_mode_rates",
    "kernel_gd_predictions",
    "time_scale",
    "spectral_norm",
    "spectral_distance",
    "lemma_sweep",
    "agreement_run",
    "first_time_within",
    "cnn_patches",
    "cnn_symmetric_init",
    "cnn_output",
    "cnn_ntk",
    "dual_activation",
    "local_overlaps",
    "cnn_ntk_infinite",
    "CNNLinearConstants",
    "cnn_linear_constants",
    "cnn_linear_features",
    "cnn_linear_kernel",
    "cnn_teacher_labels",
    "cnn_walsh_rates",
    "train_cnn",
    "cnn_kernel_sweep",
    "cnn_agreement_run",
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
    # 1 - (1 - a)^t: through expm1/log1p for a < 1 (accurate for small a); directly for
    # 1 <= a < 2, where 1 - a <= 0 (stable, oscillating modes)
    mono = a < 1
    tt = t[:, None].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        smooth = -np.expm1(tt * np.log1p(-np.where(mono, a, 0.0))[None, :])
    osc = 1.0 - (1.0 - a)[None, :] ** tt
    val = np.where(mono[None, :], smooth, osc) / safe[None, :]
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
    X = V.array("X", X, ndim=2)
    psi_test = None if X_test is None else linear_features(X_test, c, layers)
    return gd_on_features(linear_features(X, c, layers), y, eta=eta, checkpoints=checkpoints,
                          psi_test=psi_test)


def gd_on_features(psi: np.ndarray, y: np.ndarray, *, eta: float = 1.0,
                   checkpoints: Sequence[int] = (0, 1, 10, 100),
                   psi_test: np.ndarray | None = None) -> dict:
    """GD from ``beta = 0`` on ``(1/2n) ||Psi beta - y||^2`` for a feature matrix ``Psi`` (n, p).

    ``beta(t+1) = beta(t) - (eta/n) Psi^T (Psi beta(t) - y)`` in closed form through the SVD
    ``Psi = U S V^T``: ``beta(t) = V diag((1 - (1 - eta s^2/n)^t)/s) U^T y``. This is the
    linear model (5)/(9)/(11) of the two-layer network, or the CNN's linear model of
    Prop. 4.1, depending on ``Psi``. Returns ``t``, ``beta`` (``(T, p)``), ``train`` (and
    ``test`` on ``psi_test``) predictions and the training ``loss``.
    """
    ts = _checkpoints(checkpoints)
    eta = V.finite("eta", eta, positive=True)
    psi = V.array("psi", psi, ndim=2)
    n = psi.shape[0]
    y = V.array("y", y, shape=(n,))
    U, s, Vt = np.linalg.svd(psi, full_matrices=False)
    filt = _gd_filter(s**2, eta / n, ts) * s[None, :]          # (T, k)
    beta = (filt * (U.T @ y)[None, :]) @ Vt
    res = {"t": ts, "beta": beta, "train": beta @ psi.T}
    res["loss"] = 0.5 * ((res["train"] - y[None, :]) ** 2).mean(1)
    if psi_test is not None:
        res["test"] = beta @ V.array("psi_test", psi_test, shape=(None, psi.shape[1])).T
    return res


def linear_mode_rates(psi: np.ndarray, eta: float = 1.0) -> np.ndarray:
    """Per-step relaxation rates ``eta mu_k`` of GD on a linear model, largest first.

    ``mu_k`` are the eigenvalues of ``Psi^T Psi / n`` (the nonzero eigenvalues of ``K / n``,
    ``K = Psi Psi^T``): the training residual along the k-th eigenvector is multiplied by
    ``1 - eta mu_k`` per step, so it relaxes in about ``1 / (eta mu_k)`` steps. For the
    first-layer model (5), ``Psi^T Psi / n`` restricted to the ``x`` block is
    ``zeta^2 Sigma_hat / d`` (``Sigma_hat = X^T X / n``): rates ``eta zeta^2 lambda_k / d``.
    """
    psi = V.array("psi", psi, ndim=2)
    eta = V.finite("eta", eta, positive=True)
    mu = np.linalg.eigvalsh(psi.T @ psi / psi.shape[0])[::-1]
    return eta * np.clip(mu, 0.0, None)


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
    from scipy.sparse.linalg import eigsh  # only for large matrices (0.5 s to import)

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
                  reach_rtol: float = 1e-3, desc: str | None = None) -> dict:
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
    (``E[f y_part] / E[y_part^2]``), and ``lin_reach_T``: the first time (in units of ``T``,
    over every integer step up to ``t_max T``) at which the linear model's test loss is within
    ``reach_rtol`` (relative) of ``test_best_lin`` (:func:`first_time_within`).
    """
    d = V.positive_int("d", d, minimum=2)
    V.choice("layers", layers, LAYERS)
    reach_rtol = V.finite("reach_rtol", reach_rtol, positive=True)
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
    best, reach = _best_linear_reach(psi, psi_te, ytr, yte, eta, t_end, reach_rtol)
    return {
        "d": d, "n": n, "eta": eta, "T": T, "t": ts, "t_over_T": ts / T,
        "lin_reach_T": reach / T, "psi_train": psi,
        **_agreement_curves(net, lin, ts, yte, y_lin[n:], y_quad[n:], best),
    }


def _best_linear_reach(psi, psi_te, ytr, yte, eta: float, t_end: int, reach_rtol: float) -> tuple[float, float]:
    """Test loss of the best linear model (least squares on the features) and the first GD
    step at which the linear model's test loss is within ``reach_rtol`` of it."""
    beta_star = np.linalg.lstsq(psi, ytr, rcond=None)[0]
    best = float(0.5 * np.mean((psi_te @ beta_star - yte) ** 2))
    dense = gd_on_features(psi, ytr, eta=eta, checkpoints=np.arange(t_end + 1), psi_test=psi_te)
    reach = first_time_within(dense["t"], 0.5 * np.mean((dense["test"] - yte) ** 2, axis=1),
                              best, reach_rtol)
    return best, reach


def _agreement_curves(net: dict, lin: dict, ts: np.ndarray, yte: np.ndarray, yl: np.ndarray,
                      yq: np.ndarray, best: float) -> dict:
    """What both agreement drivers report: network vs linear model (relative rms gap on train
    and test; both predictions vanish at t = 0, so it is NaN there), losses, test losses
    beside the best linear model's, and the test predictions' projections on the linear
    (``yl``) and the quadratic or local (``yq``) parts of the labels."""

    def rms(a: np.ndarray) -> np.ndarray:
        return np.sqrt(np.mean(a**2, axis=-1))

    with np.errstate(invalid="ignore", divide="ignore"):
        rel_train = rms(net["train"] - lin["train"]) / rms(lin["train"])
        rel_test = rms(net["test"] - lin["test"]) / rms(lin["test"])
    rel_train[ts == 0] = np.nan
    rel_test[ts == 0] = np.nan
    return {
        "rel_train": rel_train, "rel_test": rel_test,
        "loss_net": net["loss"], "loss_lin": lin["loss"],
        "test_net": 0.5 * np.mean((net["test"] - yte) ** 2, axis=1),
        "test_lin": 0.5 * np.mean((lin["test"] - yte) ** 2, axis=1),
        "test_best_lin": best,
        "lin_net": net["test"] @ yl / (yl @ yl), "quad_net": net["test"] @ yq / (yq @ yq),
        "lin_lin": lin["test"] @ yl / (yl @ yl), "quad_lin": lin["test"] @ yq / (yq @ yq),
    }


def first_time_within(t: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray,
                      target: float, rtol: float) -> float:
    """First ``t[i]`` at which a loss curve coming down reaches ``target`` up to ``rtol``:
    ``values[i] <= (1 + rtol) target`` (``nan`` if never). A curve that dips below the
    target counts from the step it gets within ``rtol`` of it."""
    t = V.array("t", t, ndim=1)
    values = V.array("values", values, shape=t.shape)
    target = V.finite("target", target, positive=True)
    rtol = V.finite("rtol", rtol, nonnegative=True)
    hit = np.flatnonzero(values <= (1.0 + rtol) * target)
    return float(t[hit[0]]) if hit.size else float("nan")


# ---------------------------------------------------------------------------------------
# the CNN of their §4.1, eq. (12), and Prop. 4.1 (proof in App. E)
# ---------------------------------------------------------------------------------------

def _patch_index(d: int, q: int) -> np.ndarray:
    return (np.arange(d)[:, None] + np.arange(q)[None, :]) % d


def cnn_patches(X: np.ndarray | torch.Tensor, q: int) -> np.ndarray | torch.Tensor:
    """Circular patches ``[x]_{k:k+q} = (x_k, ..., x_{k+q-1})`` (indices mod ``d``): ``(n, d, q)``.

    Works on numpy arrays and torch tensors alike (same type out).
    """
    if X.ndim != 2:
        raise ValueError(f"X must have shape (n, d), got {tuple(X.shape)}")
    d = X.shape[1]
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    idx = _patch_index(d, q)
    return X[:, torch.as_tensor(idx)] if isinstance(X, torch.Tensor) else X[:, idx]


def cnn_symmetric_init(d: int, q: int, m: int, *, seed: int | torch.Generator = 0,
                       dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric initialisation of the CNN (12): filters ``W`` (m, q), read-out ``V`` (m, d).

    For ``r < m/2``: ``w_r ~ N(0, I_q)`` and ``V_r`` has independent entries uniform on
    ``{+-1}``; filter ``r + m/2`` copies ``w_r`` with ``V_{r+m/2} = -V_r``, so the output is
    exactly 0 at ``t = 0`` (as (3) for the two-layer network). Any law of ``V`` with
    ``E V_rk V_rk' = delta_kk'`` gives the same infinite-width NTK.
    """
    d = V.positive_int("d", d)
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    m = V.positive_int("m", m, minimum=2)
    if m % 2:
        raise ValueError(f"m must be even for the symmetric initialisation, got {m}")
    gen = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(int(seed))
    w = torch.randn(m // 2, q, generator=gen, dtype=dtype)
    s = torch.randint(0, 2, (m // 2, d), generator=gen).to(dtype) * 2 - 1
    return torch.cat([w, w]), torch.cat([s, -s])


def _cnn_check(X, W: torch.Tensor, Vr: torch.Tensor) -> torch.Tensor:
    if W.ndim != 2 or Vr.ndim != 2 or W.shape[0] != Vr.shape[0]:
        raise ValueError(f"W must be (m, q) and V (m, d) with the same m, got {tuple(W.shape)} "
                         f"and {tuple(Vr.shape)}")
    X = torch.as_tensor(X, dtype=W.dtype)
    if X.ndim != 2 or X.shape[1] != Vr.shape[1]:
        raise ValueError(f"X must have shape (n, {Vr.shape[1]}), got {tuple(X.shape)}")
    return X


def cnn_output(X: np.ndarray | torch.Tensor, W: torch.Tensor, V_: torch.Tensor,
               act: str = "relu") -> torch.Tensor:
    """The CNN (12): ``f(x) = (md)^{-1/2} sum_{r<=m} sum_{k<=d} V_rk phi(w_r . [x]_{k:k+q} / sqrt(q))``.

    One convolutional layer (``m`` filters ``w_r`` of size ``q``, stride 1, circular padding),
    no pooling, a linear read-out ``V`` over filters and positions. Returns ``(n,)``.
    """
    phi = activation(act)[0]
    X = _cnn_check(X, W, V_)
    m, q = W.shape
    d = X.shape[1]
    z = torch.einsum("nkq,rq->nkr", cnn_patches(X, q), W) / math.sqrt(q)
    return torch.einsum("nkr,rk->n", phi(z), V_) / math.sqrt(m * d)


def cnn_ntk(X: np.ndarray | torch.Tensor, W: torch.Tensor, V_: torch.Tensor, act: str = "relu",
            layers: str = "both", X2: np.ndarray | torch.Tensor | None = None) -> np.ndarray:
    """Finite-width NTK of the CNN (12) (App. E): ``Theta^(1)`` (filters), ``Theta^(2)`` (read-out).

    ``Theta^(2)(x, x') = (1/(md)) sum_r sum_k phi(z_rk(x)) phi(z_rk(x'))`` and
    ``Theta^(1)(x, x') = (1/(mdq)) sum_r g_r(x) . g_r(x')`` with
    ``g_r(x) = sum_k V_rk phi'(z_rk(x)) [x]_{k:k+q}``, ``z_rk(x) = w_r . [x]_{k:k+q} / sqrt(q)``.
    """
    V.choice("layers", layers, LAYERS)
    phi, dphi = activation(act)
    Xa = _cnn_check(X, W, V_)
    Xb = Xa if X2 is None else _cnn_check(X2, W, V_)
    m, q = W.shape
    d = Xa.shape[1]
    out = torch.zeros(Xa.shape[0], Xb.shape[0], dtype=W.dtype)
    Pa, Pb = cnn_patches(Xa, q), cnn_patches(Xb, q)
    Za = torch.einsum("nkq,rq->nkr", Pa, W) / math.sqrt(q)
    Zb = Za if X2 is None else torch.einsum("nkq,rq->nkr", Pb, W) / math.sqrt(q)
    if layers in ("second", "both"):
        Aa, Ab = phi(Za).flatten(1), phi(Zb).flatten(1)
        out += Aa @ Ab.T / (m * d)
    if layers in ("first", "both"):
        Ga = torch.bmm((dphi(Za) * V_.T).transpose(1, 2), Pa).flatten(1)    # (n, m q)
        Gb = torch.bmm((dphi(Zb) * V_.T).transpose(1, 2), Pb).flatten(1)
        out += Ga @ Gb.T / (m * d * q)
    return out.numpy()


_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(120)
_GH_W = _GH_W / _GH_W.sum()


def dual_activation(act: str, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``(Gamma(s), Phi(s)) = (E[phi(u) phi(u')], E[phi'(u) phi'(u')])`` for a standard
    Gaussian pair of correlation ``s`` (unit variances: patches of hypercube inputs).

    ReLU and leaky ReLU in closed form (arc-cosine kernels:
    ``Gamma = (sqrt(1-s^2) + (pi - arccos s) s) / (2 pi)``, ``Phi = (pi - arccos s) / (2 pi)``
    for ReLU; leaky ``a z + (1-a) relu(z)`` adds ``a s + ...``); the smooth activations by a
    120 x 120-node Gauss-Hermite rule. ``Gamma(s) = sum_k c_k^2 s^k / k!`` (Mehler) and
    ``Gamma'(s) = Phi(s)`` (Price's theorem).
    """
    V.choice("act", act, list(ACTIVATIONS))
    s = np.asarray(s, dtype=float)
    if np.any(np.abs(s) > 1 + 1e-12):
        raise ValueError("s must be a correlation in [-1, 1]")
    s = np.clip(s, -1.0, 1.0)
    if act in ("relu", "leaky_relu"):
        th = np.arccos(s)
        g_relu = (np.sqrt(1.0 - s * s) + (math.pi - th) * s) / (2 * math.pi)
        f_relu = (math.pi - th) / (2 * math.pi)
        if act == "relu":
            return g_relu, f_relu
        a = 0.2  # phi = a z + (1 - a) relu(z); E[u relu(u')] = s/2
        return (a * a * s + a * (1 - a) * s + (1 - a) ** 2 * g_relu,
                a * a + a * (1 - a) + (1 - a) ** 2 * f_relu)
    phi, dphi = (_np(f) for f in activation(act))
    u = _GH_X[:, None]
    flat = s.reshape(-1)
    G, F = np.empty(flat.size), np.empty(flat.size)
    for i, si in enumerate(flat):
        up = si * u + math.sqrt(max(0.0, 1.0 - si * si)) * _GH_X[None, :]
        wts = _GH_W[:, None] * _GH_W[None, :]
        G[i] = float(np.sum(wts * phi(u) * phi(up)))
        F[i] = float(np.sum(wts * dphi(u) * dphi(up)))
    return G.reshape(s.shape), F.reshape(s.shape)


def _hypercube(name: str, X) -> np.ndarray:
    X = V.array(name, X, ndim=2)
    if not np.all(np.abs(X) == 1.0):
        raise ValueError(f"{name} must lie on the hypercube {{-1, 1}}^d (Prop. 4.1's inputs)")
    return X


def local_overlaps(X: np.ndarray, q: int, X2: np.ndarray | None = None,
                   rows: slice | None = None) -> np.ndarray:
    """Integer patch overlaps ``J[i, j, k] = [x_i]_{k:k+q} . [x_j]_{k:k+q}`` for hypercube inputs.

    The local correlations of App. E are ``s_k = J / q``; on ``{-1, 1}^d`` ``J`` takes the
    values ``-q, -q+2, ..., q``. ``rows`` restricts ``i`` (to build big kernels in blocks).
    Returns an int16 array ``(n_rows, n2, d)``.
    """
    X = _hypercube("X", X)
    X2 = X if X2 is None else _hypercube("X2", X2)
    d = X.shape[1]
    if X2.shape[1] != d:
        raise ValueError(f"X2 must have {d} columns, got {X2.shape[1]}")
    q = V.positive_int("q", q)
    if q > d:
        raise ValueError(f"q (filter size) must be <= d = {d}, got {q}")
    A = X[rows if rows is not None else slice(None)].astype(np.int8)
    P = (A[:, None, :] * X2.astype(np.int8)[None, :, :]).astype(np.int16)
    C = np.cumsum(np.concatenate([P, P[..., :q]], axis=-1), axis=-1, dtype=np.int16)
    C = np.concatenate([np.zeros(C.shape[:2] + (1,), np.int16), C], axis=-1)
    return C[..., q:q + d] - C[..., :d]


def cnn_ntk_infinite(X: np.ndarray, q: int, act: str = "relu", layers: str = "both",
                     X2: np.ndarray | None = None, block: int = 2_000_000) -> np.ndarray:
    """Infinite-width NTK of the CNN (12) on hypercube inputs (App. E):

    ``Theta^(2)*(x, x') = (1/d) sum_k Gamma(s_k)``, ``Theta^(1)*(x, x') = (1/d) sum_k s_k Phi(s_k)``,
    ``s_k = [x]_{k:k+q} . [x']_{k:k+q} / q`` (patches of norm ``sqrt(q)``, so unit variances:
    see :func:`dual_activation`). ``Theta* = Theta^(1)* + Theta^(2)*`` for ``layers="both"``.
    The kernel is built in row blocks of about ``block`` overlaps.
    """
    V.choice("layers", layers, LAYERS)
    X = _hypercube("X", X)
    X2 = X if X2 is None else _hypercube("X2", X2)
    q = V.positive_int("q", q)
    s = np.arange(-q, q + 1) / q
    G, F = dual_activation(act, s)
    tab = {"first": s * F, "second": G, "both": s * F + G}[layers]
    n, n2, d = X.shape[0], X2.shape[0], X.shape[1]
    out = np.empty((n, n2))
    step = max(1, int(block) // max(1, n2 * d))
    for a in range(0, n, step):
        J = local_overlaps(X, q, X2, rows=slice(a, a + step))
        out[a:a + step] = tab[J + q].mean(axis=-1)
    return out


@dataclass(frozen=True)
class CNNLinearConstants:
    """Constants of the CNN's linear kernel (Prop. 4.1, as reconstructed) for one ``q``.

    ``const1 = E[s Phi(s)]`` and ``const2 = E[Gamma(s)]`` are the exact means of the filter and
    read-out kernels between two independent hypercube points (``s`` = local correlation of
    two independent patches, ``q s ~ 2 Bin(q, 1/2) - q``): to leading order
    ``const1 = c_2^2 / q`` and ``const2 = c_0^2 + c_2^2 / (2q)``. ``diag1 = E phi'(g)^2 - zeta^2 -
    const1``, ``diag2 = E phi(g)^2 - zeta^2 - const2`` are the identity parts left out.
    """

    zeta: float
    q: int
    const1: float
    const2: float
    diag1: float
    diag2: float


def cnn_linear_constants(act: str, q: int) -> CNNLinearConstants:
    """:class:`CNNLinearConstants` of activation ``act`` and filter size ``q``."""
    q = V.positive_int("q", q)
    j, p = _window_sum_law(q)
    s = j / q
    G, F = dual_activation(act, s)
    c1 = float(p @ (s * F))
    c2 = float(p @ G)
    zeta = float(hermite_coefficients(act, 1)[1])
    e_phi2, e_dphi2 = (float(x[0]) for x in dual_activation(act, np.array([1.0])))
    return CNNLinearConstants(zeta=zeta, q=q, const1=c1, const2=c2,
                              diag1=e_dphi2 - zeta**2 - c1, diag2=e_phi2 - zeta**2 - c2)


def cnn_linear_features(X: np.ndarray, c: CNNLinearConstants, layers: str = "both") -> np.ndarray:
    """Features of the CNN's linear model: ``(zeta x / sqrt(d), sqrt(const))`` per trained layer.

    ``layers="first"``: constant ``sqrt(const1)``; ``"second"``: ``sqrt(const2)``; ``"both"``:
    the two stacked, so that the kernel is ``2 zeta^2 x.x'/d + const1 + const2``.
    """
    V.choice("layers", layers, LAYERS)
    X = V.array("X", X, ndim=2)
    n, d = X.shape
    one = np.ones((n, 1))
    f1 = np.hstack([c.zeta * X / math.sqrt(d), math.sqrt(max(c.const1, 0.0)) * one])
    f2 = np.hstack([c.zeta * X / math.sqrt(d), math.sqrt(max(c.const2, 0.0)) * one])
    return {"first": f1, "second": f2, "both": np.hstack([f1, f2])}[layers]


def cnn_linear_kernel(X: np.ndarray, c: CNNLinearConstants, layers: str = "both",
                      X2: np.ndarray | None = None) -> np.ndarray:
    """The CNN's linear kernel ``K_CNN(x, x') = 2 zeta^2 x.x'/d + const1 + const2`` (both layers)."""
    A = cnn_linear_features(X, c, layers)
    B = A if X2 is None else cnn_linear_features(X2, c, layers)
    return A @ B.T


def cnn_teacher_labels(X: np.ndarray, *, linear: float = 1.0, local: float = 1.0,
                       seed: int | np.random.Generator = 1) -> np.ndarray:
    """Labels ``y = a_1 b.x + a_2 d^{-1/2} sum_k x_k x_{k+1}`` on hypercube inputs.

    ``b`` is a random unit vector; the second part is a translation-invariant local quadratic
    (indices mod ``d``). On ``{-1, 1}^d`` (``d >= 3``) both parts have mean 0 and variance 1 and
    are uncorrelated, and no linear function of ``x`` correlates with the second.
    """
    X = _hypercube("X", X)
    a1 = V.finite("linear", linear)
    a2 = V.finite("local", local)
    d = X.shape[1]
    if d < 3:
        raise ValueError(f"d must be >= 3 for the local quadratic part, got {d}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    b = rng.standard_normal(d)
    b /= np.linalg.norm(b)
    return a1 * (X @ b) + a2 * (X * np.roll(X, -1, axis=1)).sum(1) / math.sqrt(d)


def _window_sum_law(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Values ``j = -q..q`` of the sum of ``q`` independent signs and their probabilities."""
    j = np.arange(-q, q + 1)
    p = np.zeros(j.size)
    even = (j + q) % 2 == 0
    p[even] = [math.comb(q, int(k)) for k in (j[even] + q) // 2]
    return j, p / 2.0**q


def cnn_walsh_rates(act: str, q: int, d: int, layers: str = "both") -> dict:
    """Eigenvalues of the infinite-width CNN NTK (App. E) as an operator on ``{-1, 1}^d``.

    The kernel is a function of ``x * x'`` (entrywise), so the Walsh functions
    ``chi_S(x) = prod_{l in S} x_l`` are its eigenfunctions, with eigenvalue
    ``E_p[Theta*(p) chi_S(p)]`` for ``p`` uniform on the hypercube. With ``h = s Phi + Gamma``
    (both layers; ``s Phi`` or ``Gamma`` for one), ``S_q`` the sum of ``q`` signs and
    ``E[p_l | S_q] = S_q/q``, ``E[p_l p_l' | S_q] = (S_q^2 - q)/(q(q-1))``:

    * ``linear`` (``S = {l}``, a linear feature): ``(q/d) E[h(S_q/q) S_q/q]``, to leading order
      ``2 zeta^2 / d`` (both layers) -- the linear model's rate;
    * ``local`` (``S = {l, l+1}``, a product of neighbours): ``((q-1)/d) E[h(S_q/q)(S_q^2-q)] /
      (q(q-1))``, to leading order ``3 c_2^2 (q-1) / (d q^2)`` (both layers).

    GD with step ``eta`` on the population loss in the kernel regime relaxes the component of
    the target along ``chi_S`` by ``1 - eta * rate`` per step.
    """
    V.choice("layers", layers, LAYERS)
    q = V.positive_int("q", q, minimum=2)
    d = V.positive_int("d", d, minimum=q)
    j, p = _window_sum_law(q)
    s = j / q
    G, F = dual_activation(act, s)
    h = {"first": s * F, "second": G, "both": s * F + G}[layers]
    return {"linear": float(q / d * (p @ (h * s))),
            "local": float((q - 1) / d * (p @ (h * (j**2 - q))) / (q * (q - 1)))}


def train_cnn(X: np.ndarray, y: np.ndarray, W0: torch.Tensor, V0: torch.Tensor, *,
              act: str = "relu", eta: float = 1.0, layers: str = "both",
              checkpoints: Sequence[int] = (0, 1, 10, 100), X_test: np.ndarray | None = None,
              desc: str | None = None) -> dict:
    """Full-batch GD on loss (2) for the CNN (12), with step ``eta`` on the layers selected.

    Gradients written out (``r_i = (f(x_i) - y_i)/n``):
    ``dL/dV_rk = sum_i r_i phi(z_irk) / sqrt(md)`` and
    ``dL/dw_r = sum_i r_i sum_k V_rk phi'(z_irk) [x_i]_{k:k+q} / sqrt(mdq)``.
    Returns ``t``, ``train`` (``(T, n)``), ``test`` (if ``X_test``) and ``loss``.
    """
    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    ts = _checkpoints(checkpoints)
    phi, dphi = activation(act)
    W, Vr = W0.clone(), V0.clone()
    Xt = _cnn_check(V.array("X", X, ndim=2), W, Vr)
    n, d = Xt.shape
    m, q = W.shape
    yt = torch.as_tensor(V.array("y", y, shape=(n,)), dtype=W.dtype)
    Pt = cnn_patches(Xt, q).reshape(n * d, q)                  # rows (i, k)
    Ps = None if X_test is None else cnn_patches(
        _cnn_check(V.array("X_test", X_test, ndim=2), W, Vr), q).reshape(-1, q)
    sq, smd = math.sqrt(q), math.sqrt(m * d)
    out: dict[str, list] = {"train": [], "test": [], "loss": []}

    def forward(P: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        z = (P @ W.T / sq).reshape(-1, d, m)                   # (n, d, m)
        a = phi(z)
        return z, a, a.reshape(a.shape[0], -1) @ Vr.T.reshape(-1) / smd

    it = range(int(ts[-1]) + 1)
    if desc is not None:
        it = progress(it, desc=desc)
    k = 0
    for step in it:
        z, a, f = forward(Pt)
        if k < len(ts) and step == ts[k]:
            out["train"].append(f.clone())
            out["loss"].append(0.5 * ((f - yt) ** 2).mean())
            if Ps is not None:
                out["test"].append(forward(Ps)[2])
            k += 1
            if k == len(ts):
                break
        r = (f - yt) / n
        gV = gW = None
        if layers in ("second", "both"):
            gV = (r @ a.reshape(n, -1)).reshape(d, m).T / smd
        if layers in ("first", "both"):
            B = dphi(z) * (r[:, None, None] * Vr.T[None])         # (n, d, m)
            gW = B.reshape(n * d, m).T @ Pt / (smd * sq)
        if gV is not None:
            Vr = Vr - eta * gV
        if gW is not None:
            W = W - eta * gW
    res = {"t": ts}
    for key, val in out.items():
        if val:
            res[key] = torch.stack(val).numpy()
    return res


def cnn_kernel_sweep(ds: Sequence[int], qs: Sequence[int], *, act: str = "relu",
                     alpha: float = 0.25, n_factor: float = 2.0, seed: int = 0,
                     desc: str | None = None) -> dict:
    """Prop. 4.1 numerically: the infinite-width CNN NTK against its linear kernel.

    For each ``d`` in ``ds`` (``n = 2 round(n_factor d^{1+alpha} / 2)`` hypercube points, seed
    ``seed + 1000 i``) and each filter size ``q`` in ``qs`` (``q <= d``), with
    ``L = 2 zeta^2 X X^T / d`` (the scaled data kernel, norm ``Theta(n/d)``):

    * ``rel``: ``||Theta* - L - (const1 + const2) 1 1^T - kappa I|| / ||L||`` with the exact
      constants (:func:`cnn_linear_constants`) and ``kappa = diag1 + diag2``;
    * ``rel_lead``: the same with the leading-order constant ``c_0^2 + 3 c_2^2 / (2q)``;
    * ``rel_noid``: the same as ``rel`` without the identity part ``kappa I``.

    Arrays of shape ``(len(ds), len(qs))`` (``nan`` where ``q > d``).
    """
    ds = [V.positive_int("ds", d, minimum=3) for d in ds]
    qs = [V.positive_int("qs", q) for q in qs]
    alpha = V.in_interval("alpha", alpha, 0.0, 1.0, closed="both")
    n_factor = V.finite("n_factor", n_factor, positive=True)
    h = hermite_coefficients(act, 2)
    keys = ("rel", "rel_lead", "rel_noid")
    res = {k: np.full((len(ds), len(qs)), np.nan) for k in keys}
    ns = []
    it = progress(list(enumerate(ds)), desc=desc) if desc is not None else enumerate(ds)
    for i, d in it:
        n = max(2, 2 * int(round(n_factor * d ** (1 + alpha) / 2)))
        ns.append(n)
        X, _ = make_data(n, d, spectrum="flat", entries="rademacher", rotate=False,
                         seed=seed + 1000 * i)
        zeta = float(h[1])
        L = 2 * zeta**2 * X @ X.T / d
        nL = spectral_norm(L)
        for j, q in enumerate(qs):
            if q > d:
                continue
            c = cnn_linear_constants(act, q)
            Th = cnn_ntk_infinite(X, q, act, "both")
            kap = (c.diag1 + c.diag2) * np.eye(n)
            lead = h[0] ** 2 + 1.5 * h[2] ** 2 / q
            res["rel"][i, j] = spectral_norm(Th - L - (c.const1 + c.const2) - kap) / nL
            res["rel_lead"][i, j] = spectral_norm(Th - L - lead - kap) / nL
            res["rel_noid"][i, j] = spectral_norm(Th - L - (c.const1 + c.const2)) / nL
    res.update(d=np.asarray(ds), q=np.asarray(qs), n=np.asarray(ns))
    return res


def cnn_agreement_run(d: int, q: int, *, act: str = "relu", layers: str = "both",
                      m: int | None = None, eta: float = 4.0, n_per_d: int = 8,
                      n_test: int = 400, t_max: float = 8.0, n_checkpoints: int = 30,
                      seed: int = 0, reach_rtol: float = 1e-3, desc: str | None = None) -> dict:
    """Train the CNN (12) and its linear model on the same hypercube data; compare.

    ``n = n_per_d d`` training points, ``m`` filters (default ``n``), labels
    ``y = y_lin + y_loc`` from :func:`cnn_teacher_labels` (a linear part and a local quadratic
    part, unit variance each), GD with step ``eta`` on ``layers``; the linear model is GD from
    zero on :func:`cnn_linear_features` with the same step. Checkpoints are log-spaced up to
    ``t_max T``, ``T = d log d / eta``. Returns the same keys as :func:`agreement_run`
    (``quad_*`` are the overlaps with ``y_loc``), plus ``ntk_rel``: the relative distance
    ``||Theta(0) - K_CNN - kappa I|| / ||2 zeta^2 X X^T / d||`` of the finite-width NTK at
    initialisation on the training set, ``ntk_rel_inf`` the same for the infinite-width NTK,
    ``eta_K_over_n`` (``eta ||K_CNN|| / n``, at most 1 in App. C) and ``rate_linear``,
    ``rate_local``, the population rates of :func:`cnn_walsh_rates`.
    """
    d = V.positive_int("d", d, minimum=3)
    q = V.positive_int("q", q)
    V.choice("layers", layers, LAYERS)
    eta = V.finite("eta", eta, positive=True)
    n = V.positive_int("n_per_d", n_per_d) * d
    m = n + (n % 2) if m is None else V.positive_int("m", m, minimum=2)
    n_test = V.positive_int("n_test", n_test)
    reach_rtol = V.finite("reach_rtol", reach_rtol, positive=True)
    T = time_scale(d, eta)
    t_end = max(2, int(round(V.finite("t_max", t_max, positive=True) * T)))
    ts = np.unique(np.round(np.logspace(0, math.log10(t_end),
                                        V.positive_int("n_checkpoints", n_checkpoints))))
    ts = np.concatenate([[0], ts.astype(int)])
    X, _ = make_data(n + n_test, d, spectrum="flat", entries="rademacher", rotate=False, seed=seed)
    y_lin = cnn_teacher_labels(X, linear=1.0, local=0.0, seed=seed + 1)
    y_loc = cnn_teacher_labels(X, linear=0.0, local=1.0, seed=seed + 1)
    y = y_lin + y_loc
    Xtr, Xte, ytr, yte = X[:n], X[n:], y[:n], y[n:]
    c = cnn_linear_constants(act, q)
    W, Vr = cnn_symmetric_init(d, q, m, seed=seed + 2, dtype=torch.float64)
    L = 2 * c.zeta**2 * Xtr @ Xtr.T / d
    K = cnn_linear_kernel(Xtr, c, layers)
    kap = {"first": c.diag1, "second": c.diag2, "both": c.diag1 + c.diag2}[layers] * np.eye(n)
    nL = spectral_norm(L)
    ntk_rel = spectral_norm(cnn_ntk(Xtr, W, Vr, act, layers) - K - kap) / nL
    ntk_rel_inf = spectral_norm(cnn_ntk_infinite(Xtr, q, act, layers) - K - kap) / nL
    net = train_cnn(Xtr, ytr, W.to(torch.float32), Vr.to(torch.float32), act=act, eta=eta,
                    layers=layers, checkpoints=ts, X_test=Xte, desc=desc)
    psi, psi_te = cnn_linear_features(Xtr, c, layers), cnn_linear_features(Xte, c, layers)
    lin = gd_on_features(psi, ytr, eta=eta, checkpoints=ts, psi_test=psi_te)
    best, reach = _best_linear_reach(psi, psi_te, ytr, yte, eta, t_end, reach_rtol)

    return {
        "d": d, "q": q, "n": n, "m": m, "eta": eta, "T": T, "t": ts, "t_over_T": ts / T,
        "lin_reach_T": reach / T, "ntk_rel": ntk_rel, "ntk_rel_inf": ntk_rel_inf,
        "eta_K_over_n": eta * spectral_norm(K) / n,
        **{"rate_" + k: v for k, v in cnn_walsh_rates(act, q, d, layers).items()},
        **_agreement_curves(net, lin, ts, yte, y_lin[n:], y_loc[n:], best),
    }
