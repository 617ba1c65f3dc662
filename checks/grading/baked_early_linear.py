"""Baked regions of §7.1b early-time linear learning:
demo reference results and test expectations (see :mod:`checks.grading.bake`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.grading.registry import baked

__all__: list[str] = []


def _library_kernels(X, activation: str, t2: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(K1, K2) of the linear models (5), (9): the course's answer to Exercise 7.1b.C."""
    from td_lib import early_linear as el

    c = el.linear_constants(activation, t2)
    return el.linear_kernel(X, c, "first"), el.linear_kernel(X, c, "second")


@baked(digits=12)
def linear_kernels_hidden() -> dict[str, Any]:
    """test_ex71bC_linear_kernels, hidden part: (K1, K2) on make_data(15, 6, rng=2) for four
    activations and values of tr(Sigma^2)/d, and for softplus with the default tr(Sigma^2)/d on
    five points whose norms differ a lot from sqrt(d) (the test checks to 1e-10)."""
    from td_lib import early_linear as el

    X, _ = el.make_data(15, 6, rng=2)
    cases = {act: _library_kernels(X, act, t2)
             for act, t2 in (("gelu", 1.0), ("softplus", 1.4), ("tanh", 1.1), ("leaky_relu", 0.8))}
    Xd = np.random.default_rng(4).standard_normal((5, 3)) * np.array([[0.3], [0.8], [1.0], [1.6], [2.5]])
    return {"_ref_lk": cases, "_ref_lk_default": _library_kernels(Xd, "softplus")}


#: what the agreement demo's cell does not rebuild of each run (the linear model's features: n x n numbers)
_NOT_BAKED = ("psi_train",)


def _finite_or_none(value):
    """A float or an array's entries as floats, with None for NaN (a baked value is finite; the demo reads
    None in a list as NaN). The quick run ends before the linear model reaches its line: lin_reach_T is NaN."""
    arr = np.asarray(value)
    if arr.dtype.kind != "f":
        return value
    if arr.ndim == 0:
        return None if np.isnan(arr) else float(arr)
    return [None if np.isnan(x) else float(x) for x in arr.ravel()]


@baked(digits=6, atol=1e-7)
def agreement_demo() -> dict[str, Any]:
    """The agreement demo of §7.1b (early_linear.agreement_run: ReLU, first layer, n = m = 12 d, seed 0),
    full (d = 16, 32; t up to 16 T) and quick (d = 16; t up to 2 T): network and the linear model of
    the course's kernels: the fields of each AgreementRun but its features, which the demo rebuilds
    (el.AgreementRun(**run)). Trains the network three times (about 7 s). At t = 0 the distances
    between network and linear models are zero up to rounding (about 1e-9, of either sign from one
    machine's BLAS threads to another's): ``atol`` takes them as the zeros they are."""
    from td_lib import early_linear as el

    def run(d: int, t_max: float) -> dict[str, Any]:
        r = el.agreement_run(d, activation="relu", layers="first", n_per_d=12, t_max=t_max, rng=0)
        return {k: _finite_or_none(val) for k, val in vars(r).items() if k not in _NOT_BAKED}

    return {"_ref_agree": {"full": {d: run(d, 16.0) for d in (16, 32)}, "quick": {16: run(16, 2.0)}}}
