"""The linear models of Hu et al. (2020), their kernels, and gradient descent on them.

A two-layer network at standard initialisation first follows a linear model of the input
(their Theorems 3.2, 3.5 and D.1). With Hermite coefficients ``c_k = E[phi(g) He_k(g)] =
E[phi^(k)(g)]``, ``g ~ N(0, 1)``, the constants are ``zeta = c_1``,
``nu = c_2 sqrt(tr(Sigma^2) / d)``, ``theta0 = c_0``, ``theta1 = c_2``,
``theta2 = (c_2 + c_4) / 2`` and the feature maps

* (5) ``psi1(x) = d^{-1/2} (zeta x, nu)`` (first layer trained);
* (9) ``psi2(x) = (d^{-1/2} zeta x, (2d)^{-1/2} nu, q(x))``, ``q(x) = theta0 + theta1 e +
  theta2 e^2``, ``e = ||x|| / sqrt(d) - 1`` (second layer trained);
* (11) ``psi(x) = (psi1(x), psi2(x))`` (both layers).

GD from zero on a linear model with feature matrix ``Psi`` relaxes the component along the
k-th eigenvector of ``Psi^T Psi / n`` at rate ``eta mu_k`` per step
(:func:`linear_mode_rates`); for (5) the linear directions have ``mu_k = zeta^2 lambda_k / d``.
The iterates are evaluated in closed form with the GD filter of
:func:`td_lib.kernel_flow.gd_filter`; GD on a kernel alone (the NTK-linearised network) is
:func:`td_lib.kernel_flow.kernel_gd_predict`.

References
----------
Hu, Xiao, Adlam & Pennington (2020), "The surprising simplicity of the early-time learning
dynamics of neural networks", eqs. (5), (9), (11), Prop. 3.4, Thm. 3.2 and Cor. 3.3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from td_lib import hermite
from td_lib.core import validate as V
from td_lib.core.gaussian import gaussian_expectation
from td_lib.early_linear._shared import BREAKPOINTS, LAYERS, GDRun, act, check_checkpoints
from td_lib.kernel_flow import gd_filter

__all__ = ["LinearConstants", "linear_constants", "linear_features", "linear_kernel",
           "train_linear_model", "gd_on_features", "linear_mode_rates", "time_scale", "spectral_norm",
           "spectral_distance"]


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


def linear_constants(activation: str, tr_sigma2_over_d: float = 1.0) -> LinearConstants:
    """The constants of the linear models (5), (9) from the Hermite expansion of ``phi``.

    Parameters
    ----------
    activation : str
        Activation name (one of :data:`td_lib.early_linear.ACTIVATION_NAMES`).
    tr_sigma2_over_d : float
        ``tr(Sigma^2) / d`` of the input covariance (1 for isotropic data).

    Returns
    -------
    LinearConstants

    References
    ----------
    Hu et al. (2020), the definitions of ``zeta, nu, theta0, theta1, theta2`` before eq. (5) and
    (9); derived in Exercise 7.1b.A of the notebook.

    Examples
    --------
    >>> c = linear_constants("relu")
    >>> round(c.zeta, 12), round(c.theta0, 12), round(c.diag1, 12)   # 1/2, 1/sqrt(2 pi), 1/4
    (0.5, 0.398942280401, 0.25)
    """
    t2 = V.finite("tr_sigma2_over_d", tr_sigma2_over_d, positive=True)
    a = act(activation)
    c = hermite.coefficients(a.f, 4, breakpoints=BREAKPOINTS)
    e_dphi2, e_phi2 = (float(x) for x in gaussian_expectation(
        lambda x: np.stack([a.df(x) ** 2, a.f(x) ** 2], axis=1), breakpoints=BREAKPOINTS))
    return LinearConstants(
        zeta=float(c[1]), nu=float(c[2] * math.sqrt(t2)), theta0=float(c[0]),
        theta1=float(c[2]), theta2=float(0.5 * (c[2] + c[4])),
        diag1=float(e_dphi2 - c[1] ** 2), diag2=float(e_phi2 - c[0] ** 2 - c[1] ** 2))


def linear_features(X: np.ndarray, c: LinearConstants, layers: str = "both") -> np.ndarray:
    """Feature map of the linear model (5) ``psi1``, (9) ``psi2`` or (11) ``psi = (psi1, psi2)``.

    ``psi1(x) = d^{-1/2} (zeta x, nu)``;
    ``psi2(x) = (d^{-1/2} zeta x, (2d)^{-1/2} nu, theta0 + theta1 e + theta2 e^2)``
    with ``e = ||x||/sqrt(d) - 1``. Returns ``(n, d+1)``, ``(n, d+2)`` or ``(n, 2d+3)``.

    References
    ----------
    Hu et al. (2020), eqs. (5), (9) and (11).
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

    References
    ----------
    Hu et al. (2020), the kernels of eqs. (5), (9), (11) (Prop. 3.4 compares them with the NTK).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> np.round(linear_kernel(X, linear_constants("relu"), "first"), 6)
    array([[0.204577, 0.079577],
           [0.079577, 0.204577]])
    """
    A = linear_features(X, c, layers)
    B = A if X2 is None else linear_features(X2, c, layers)
    return A @ B.T


def gd_on_features(psi: np.ndarray, y: np.ndarray, *, eta: float = 1.0,
                   checkpoints: Sequence[int] = (0, 1, 10, 100),
                   psi_test: np.ndarray | None = None) -> GDRun:
    """GD from ``beta = 0`` on ``(1/2n) ||Psi beta - y||^2`` for a feature matrix ``Psi`` (n, p).

    ``beta(t+1) = beta(t) - (eta/n) Psi^T (Psi beta(t) - y)`` in closed form through the SVD
    ``Psi = U S V^T``: ``beta(t) = V diag((1 - (1 - eta s^2/n)^t)/s) U^T y`` (the filter of
    :func:`td_lib.kernel_flow.gd_filter` with step ``eta/n``; ``eta s^2 / n >= 2`` diverges and
    raises a ``ValueError``). This is the
    linear model (5)/(9)/(11) of the two-layer network, or the CNN's linear model of
    Prop. 4.1, depending on ``Psi``.

    Returns
    -------
    GDRun
        ``t`` (the checkpoints), ``beta`` (``(T, p)``), ``train`` (and ``test`` on ``psi_test``)
        predictions and the training ``loss``.

    References
    ----------
    Hu et al. (2020), the linear models' GD of Thm. 3.2 (started from zero).

    Examples
    --------
    >>> psi = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> r = gd_on_features(psi, np.array([1.0, 2.0, 0.0]), eta=0.5, checkpoints=[0, 1, 50])
    >>> np.round(r.final("beta"), 6).tolist()          # the least-squares fit (1/9, 7/9)
    [0.111111, 0.777778]
    """
    ts = check_checkpoints(checkpoints)
    eta = V.finite("eta", eta, positive=True)
    psi = V.array("psi", psi, ndim=2)
    n = psi.shape[0]
    y = V.array("y", y, shape=(n,))
    U, s, Vt = np.linalg.svd(psi, full_matrices=False)
    filt = gd_filter(s**2, ts, eta=eta / n) * s[None, :]         # (T, k)
    beta = (filt * (U.T @ y)[None, :]) @ Vt
    train = beta @ psi.T
    test = None if psi_test is None else beta @ V.array("psi_test", psi_test, shape=(None, psi.shape[1])).T
    return GDRun(t=ts, beta=beta, train=train, loss=0.5 * ((train - y[None, :]) ** 2).mean(1), test=test)


def train_linear_model(X: np.ndarray, y: np.ndarray, c: LinearConstants, *,
                       layers: str = "both", eta: float = 1.0,
                       checkpoints: Sequence[int] = (0, 1, 10, 100),
                       X_test: np.ndarray | None = None) -> GDRun:
    """GD from zero on ``(1/2n) sum_i (beta . psi(x_i) - y_i)^2`` for the linear model (5)/(9)/(11).

    :func:`gd_on_features` on :func:`linear_features`: a :class:`GDRun` with ``t``, ``beta``
    (``(T, p)``), ``train`` and ``test`` predictions and ``loss``.

    References
    ----------
    Hu et al. (2020), eqs. (5), (9), (11) and Thm. 3.2.
    """
    X = V.array("X", X, ndim=2)
    psi_test = None if X_test is None else linear_features(X_test, c, layers)
    return gd_on_features(linear_features(X, c, layers), y, eta=eta, checkpoints=checkpoints,
                          psi_test=psi_test)


def linear_mode_rates(psi: np.ndarray, eta: float = 1.0) -> np.ndarray:
    """Per-step relaxation rates ``eta mu_k`` of GD on a linear model, largest first.

    ``mu_k`` are the eigenvalues of ``Psi^T Psi / n`` (the nonzero eigenvalues of ``K / n``,
    ``K = Psi Psi^T``): the training residual along the k-th eigenvector is multiplied by
    ``1 - eta mu_k`` per step, so it relaxes in about ``1 / (eta mu_k)`` steps. For the
    first-layer model (5), ``Psi^T Psi / n`` restricted to the ``x`` block is
    ``zeta^2 Sigma_hat / d`` (``Sigma_hat = X^T X / n``): rates ``eta zeta^2 lambda_k / d``.

    References
    ----------
    Hu et al. (2020), Cor. 3.3 (the linear model converges by ``T`` for well-conditioned data).

    Examples
    --------
    >>> np.round(linear_mode_rates(np.diag([2.0, 1.0]), eta=0.5), 6).tolist()   # n = 2
    [1.0, 0.25]
    """
    psi = V.array("psi", psi, ndim=2)
    eta = V.finite("eta", eta, positive=True)
    mu = np.linalg.eigvalsh(psi.T @ psi / psi.shape[0])[::-1]
    return eta * np.clip(mu, 0.0, None)


def time_scale(d: int, eta: float) -> float:
    """The paper's time scale ``T = d log d / eta`` (Theorems 3.2, 3.5, D.1 hold for ``t <= cT``).

    References
    ----------
    Hu et al. (2020), Thm. 3.2.

    Examples
    --------
    >>> round(time_scale(32, 4.0), 6)
    27.725887
    """
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
