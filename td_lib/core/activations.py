"""The activation registry: one table of σ, σ′, σ″ for the whole library, numpy and torch.

Every activation is written once and works on numpy arrays and torch tensors alike (the
backend is chosen from the argument's type; torch is imported only when a tensor comes in,
so numpy-only code paths never load it). Names follow one convention, the formula in
:data:`FORMULAS`:

=============  ===========================================  ==============================
name           σ(z)                                          used in
=============  ===========================================  ==============================
``linear``     z                                             §7.1 linear networks
``relu``       max(z, 0)                                     §7.1b, §7.2, §7.4, CNN/LCN
``leaky_relu`` z for z > 0, 0.2 z otherwise                  §7.1b (Assumption 3.2)
``gelu``       z Φ(z) (the exact erf form)                   §7.1, §7.1b
``tanh``       tanh z                                        §7.1, §7.1b
``softplus``   log(1 + eᶻ)                                   §7.1b
``erf``        erf z                                         §7.1 (NTK exercise)
``erf_sqrt2``  erf(z/√2), Saad & Solla's g                   CNN/LCN (the paper's "erf")
=============  ===========================================  ==============================

References
----------
Saad & Solla (1995), g(z) = erf(z/√2); Hendrycks & Gimpel (2016), GELU = z Φ(z).

Examples
--------
>>> import numpy as np
>>> act = get("gelu")
>>> float(act.f(np.array(0.0))), float(act.df(np.array(0.0)))
(0.0, 0.5)
>>> round(float(get("erf_sqrt2").df(np.array(0.0))), 12)  # sqrt(2/pi)
0.797884560803
>>> names()[:3]
('linear', 'relu', 'leaky_relu')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from td_lib.core import validate as V

__all__ = ["Activation", "FORMULAS", "LEAKY_SLOPE", "get", "names"]

_SQRT2 = math.sqrt(2.0)
_SQRT1_2 = 1.0 / _SQRT2
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
LEAKY_SLOPE = 0.2


class _Numpy:
    """Elementwise operations on numpy arrays (erf from scipy.special)."""

    exp, tanh = np.exp, np.tanh  # ufuncs (not bound as methods)
    ones_like, zeros_like = staticmethod(np.ones_like), staticmethod(np.zeros_like)

    @staticmethod
    def erf(z):
        from scipy.special import erf

        return erf(z)

    @staticmethod
    def relu(z):
        return np.maximum(z, 0.0)

    @staticmethod
    def step(z):
        z = np.asarray(z)
        return (z > 0).astype(z.dtype if np.issubdtype(z.dtype, np.floating) else float)

    @staticmethod
    def where(c, a, b):
        return np.where(c, a, b)

    @staticmethod
    def full_like(z, v):
        return np.full_like(np.asarray(z, dtype=float), v)

    @staticmethod
    def softplus(z):
        return np.logaddexp(0.0, z)

    @staticmethod
    def sigmoid(z):
        from scipy.special import expit

        return expit(z)


class _Torch:
    """The same operations on torch tensors (torch imported on first use)."""

    def __init__(self) -> None:
        import torch

        self.t = torch
        self.exp, self.tanh, self.erf, self.relu = torch.exp, torch.tanh, torch.erf, torch.relu
        self.ones_like, self.zeros_like, self.full_like = torch.ones_like, torch.zeros_like, torch.full_like
        self.softplus, self.sigmoid = torch.nn.functional.softplus, torch.sigmoid

    def step(self, z):
        return (z > 0).to(z.dtype)

    def where(self, c, a, b):
        return self.t.where(c, a, b)


_NP = _Numpy()
_TORCH: list[_Torch] = []


def _ops(z):
    if type(z).__module__.split(".")[0] == "torch":
        if not _TORCH:
            _TORCH.append(_Torch())
        return _TORCH[0]
    return _NP


# --- the formulas, each written once (b = backend operations) ------------------------------

def _gelu(z, b):
    return z * 0.5 * (1.0 + b.erf(z * _SQRT1_2))


def _dgelu(z, b):
    return 0.5 * (1.0 + b.erf(z * _SQRT1_2)) + z * _INV_SQRT_2PI * b.exp(-0.5 * z * z)


def _ddgelu(z, b):
    return (2.0 - z * z) * _INV_SQRT_2PI * b.exp(-0.5 * z * z)


def _gelu_vd(z, b):
    cdf = 0.5 * (1.0 + b.erf(z * _SQRT1_2))
    return z * cdf, cdf + z * _INV_SQRT_2PI * b.exp(-0.5 * z * z)


def _dtanh(z, b):
    return 1.0 - b.tanh(z) ** 2


def _ddtanh(z, b):
    t = b.tanh(z)
    return -2.0 * t * (1.0 - t * t)


def _tanh_vd(z, b):
    t = b.tanh(z)
    return t, 1.0 - t * t


def _leaky(z, b):
    return b.where(z > 0, z, LEAKY_SLOPE * z)


def _dleaky(z, b):
    return b.where(z > 0, b.ones_like(z), b.full_like(z, LEAKY_SLOPE))


_TABLE: dict[str, tuple[Callable, Callable, Callable, Callable | None]] = {
    # name: (sigma, sigma', sigma'', fused (sigma, sigma') or None)
    "linear": (lambda z, b: z, lambda z, b: b.ones_like(z), lambda z, b: b.zeros_like(z), None),
    "relu": (lambda z, b: b.relu(z), lambda z, b: b.step(z), lambda z, b: b.zeros_like(z), None),
    "leaky_relu": (_leaky, _dleaky, lambda z, b: b.zeros_like(z), None),
    "gelu": (_gelu, _dgelu, _ddgelu, _gelu_vd),
    "tanh": (lambda z, b: b.tanh(z), _dtanh, _ddtanh, _tanh_vd),
    "softplus": (lambda z, b: b.softplus(z), lambda z, b: b.sigmoid(z),
                 lambda z, b: b.sigmoid(z) * (1.0 - b.sigmoid(z)), None),
    "erf": (lambda z, b: b.erf(z), lambda z, b: _TWO_OVER_SQRT_PI * b.exp(-z * z),
            lambda z, b: -2.0 * _TWO_OVER_SQRT_PI * z * b.exp(-z * z), None),
    "erf_sqrt2": (lambda z, b: b.erf(z / _SQRT2), lambda z, b: _SQRT_2_OVER_PI * b.exp(-0.5 * z * z),
                  lambda z, b: -_SQRT_2_OVER_PI * z * b.exp(-0.5 * z * z), None),
}

#: name -> the formula of σ (one naming convention for every module).
FORMULAS: dict[str, str] = {
    "linear": "z", "relu": "max(z, 0)", "leaky_relu": f"z (z > 0), {LEAKY_SLOPE} z (z <= 0)",
    "gelu": "z Phi(z)", "tanh": "tanh(z)", "softplus": "log(1 + e^z)", "erf": "erf(z)",
    "erf_sqrt2": "erf(z / sqrt 2)",
}


@dataclass(frozen=True)
class Activation:
    """One registered activation: ``f`` = σ, ``df`` = σ′, ``d2f`` = σ″ (a.e. for the
    piecewise-linear ones), and ``f_df`` = (σ, σ′) in one pass. Each accepts a numpy array or
    a torch tensor and returns the same kind."""

    name: str
    formula: str
    smooth: bool

    def _parts(self):
        return _TABLE[self.name]

    def f(self, z):
        """σ(z)."""
        return self._parts()[0](z, _ops(z))

    def df(self, z):
        """σ′(z) (for relu and leaky_relu the right-continuous step at 0 is 0 / the slope)."""
        return self._parts()[1](z, _ops(z))

    def d2f(self, z):
        """σ″(z) (zero almost everywhere for the piecewise-linear activations)."""
        return self._parts()[2](z, _ops(z))

    def f_df(self, z):
        """(σ(z), σ′(z)), sharing the work where the formula allows it (gelu, tanh)."""
        fused = self._parts()[3]
        b = _ops(z)
        if fused is not None:
            return fused(z, b)
        return self._parts()[0](z, b), self._parts()[1](z, b)

    @property
    def kinks(self) -> tuple[float, ...]:
        """Points where σ′ jumps (``breakpoints`` for :func:`td_lib.core.gaussian.gaussian_expectation`)."""
        return () if self.smooth else (0.0,)


_SMOOTH = {"linear", "gelu", "tanh", "softplus", "erf", "erf_sqrt2"}
_REGISTRY = {n: Activation(n, FORMULAS[n], n in _SMOOTH) for n in _TABLE}


def names() -> tuple[str, ...]:
    """The registered names, in table order."""
    return tuple(_REGISTRY)


def get(name: str, allowed=None) -> Activation:
    """The :class:`Activation` called ``name``.

    ``allowed`` (a subset of :func:`names`) restricts the choice for a caller that supports
    only some activations (the CNN/LCN error formulas need ``erf_sqrt2`` or ``relu``); a name
    outside it raises a ``ValueError`` naming the argument ``activation``.
    """
    V.choice("activation", name, list(allowed if allowed is not None else _REGISTRY))
    return _REGISTRY[name]
