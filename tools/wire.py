"""The data channel between a student's kernel and the trusted test runner (tools/remote_tests.py).

While grading, a test cell does not run in the student's kernel: it runs in a separate, trusted
process, and every call it makes to a function the student wrote travels to the student's
kernel as *data* (the function's name and its arguments) and comes back as data (the value, or
the name and message of the exception). This module is that data format, and the little server
the grader installs in the student's kernel before the first cell. It is plain JSON (no pickle,
nothing that executes on decoding):

- ``None``, ``bool``, ``int``, ``str`` and finite ``float`` as JSON (floats round-trip exactly);
  other floats, ``complex``, ``tuple``, ``list``, ``dict`` as tagged objects;
- numpy arrays and scalars of bool/int/uint/float/complex dtype (bytes in base64), torch
  tensors the same way, numpy and torch random generators by their state;
- a callable by reference: ``{"ref": "module:qualname"}`` for a function a library defines,
  ``{"rf": name}`` for one of the student's functions, ``{"cb": n}`` for any other callable of the
  side that sends it (the receiving side gets a stub that calls back through the grader).

Anything else (an object of the student's own class, a file, a module) is refused with a
``TypeError`` that names its type. A message is at most :data:`MAX_BYTES` long.

This file is also executed, as source, inside the student's kernel (which has no ``tools``): it
imports only the standard library at module level, and numpy/torch when an object of theirs
arrives.
"""

from __future__ import annotations

import base64
import builtins
import importlib
import json
import math
import sys

MAX_BYTES = 64 << 20
_KINDS = "biufc"  # numpy dtype kinds that travel: bool, int, uint, float, complex


class WireError(TypeError):
    """A value that cannot travel between the student's kernel and the test runner."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _ref_of(obj) -> str | None:
    """``module:qualname`` when ``obj`` is what that name imports (a library function, a ufunc)."""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if mod is None and type(obj).__name__ == "ufunc":
        name = getattr(obj, "__name__", "")
        for m in ("numpy", "scipy.special"):
            if getattr(sys.modules.get(m), name, None) is obj:
                return f"{m}:{name}"
        return None
    if not mod or not qual or mod == "__main__" or "<" in qual or mod not in sys.modules:
        return None
    target = sys.modules[mod]
    for part in qual.split("."):
        target = getattr(target, part, None)
    return f"{mod}:{qual}" if target is obj else None


def encode(obj, callable_hook=None, _depth=0):
    """``obj`` as JSON-able data; ``callable_hook(obj)`` encodes a callable (default: refuse)."""
    if _depth > 50:
        raise WireError("a value nested more than 50 levels deep")
    enc = lambda x: encode(x, callable_hook, _depth + 1)  # noqa: E731
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"f": repr(obj)}
    if isinstance(obj, complex):
        return {"c": [enc(obj.real), enc(obj.imag)]}
    if isinstance(obj, tuple):
        return {"t": [enc(x) for x in obj]}
    if isinstance(obj, list):
        return {"l": [enc(x) for x in obj]}
    if isinstance(obj, dict):
        return {"d": [[enc(k), enc(v)] for k, v in obj.items()]}
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(obj, (np.ndarray, np.generic)):
            arr = np.asarray(obj)
            if arr.dtype.kind not in _KINDS or arr.dtype.hasobject:
                raise WireError(f"a numpy array of dtype {arr.dtype} cannot be sent (numbers only)")
            out = {"nd": arr.dtype.str, "s": list(arr.shape), "b": _b64(np.ascontiguousarray(arr).tobytes())}
            if isinstance(obj, np.generic):
                out["scalar"] = True
            return out
        if isinstance(obj, np.random.Generator):
            return {"ng": type(obj.bit_generator).__name__, "st": enc(obj.bit_generator.state)}
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(obj, torch.Tensor):
            arr = obj.detach().cpu().numpy()
            return {"tt": str(obj.dtype).replace("torch.", ""), "s": list(arr.shape), "b": _b64(arr.tobytes()),
                    "grad": bool(obj.requires_grad)}
        if isinstance(obj, torch.Generator):
            return {"tg": _b64(obj.get_state().numpy().tobytes())}
    if callable(obj) and not isinstance(obj, type):
        if callable_hook is not None:
            return callable_hook(obj)
        ref = _ref_of(obj)
        if ref is not None:
            return {"ref": ref}
    raise WireError(f"a value of type {type(obj).__module__}.{type(obj).__qualname__} cannot be sent to or "
                    "from the grader (use numbers, strings, tuples, lists, dicts, numpy arrays or torch tensors)")


def decode(data, callable_hook=None, allowed_refs=None):
    """The value :func:`encode` encoded; ``callable_hook(tagged)`` rebuilds a callable; refs are
    imported only from top-level packages in ``allowed_refs`` (None: any)."""
    dec = lambda x: decode(x, callable_hook, allowed_refs)  # noqa: E731
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        raise WireError("malformed message: a bare list")
    if not isinstance(data, dict) or len(data) == 0:
        raise WireError("malformed message")
    if "f" in data:
        value = float(data["f"])
        if math.isfinite(value):
            raise WireError("malformed message: a tagged finite float")
        return value
    if "c" in data:
        return complex(dec(data["c"][0]), dec(data["c"][1]))
    if "t" in data:
        return tuple(dec(x) for x in data["t"])
    if "l" in data:
        return [dec(x) for x in data["l"]]
    if "d" in data:
        return {_hashable(dec(k)): dec(v) for k, v in data["d"]}
    if "nd" in data:
        import numpy as np

        dt = np.dtype(data["nd"])
        if dt.kind not in _KINDS or dt.hasobject:
            raise WireError(f"refused dtype {dt}")
        shape = tuple(int(n) for n in data["s"])
        arr = np.frombuffer(_unb64(data["b"]), dtype=dt).reshape(shape).copy()
        return arr[()] if data.get("scalar") else arr
    if "ng" in data:
        import numpy as np

        bitgen = getattr(np.random, str(data["ng"]), None)
        if bitgen is None or not isinstance(bitgen, type) or not issubclass(bitgen, np.random.BitGenerator):
            raise WireError(f"unknown bit generator {data['ng']!r}")
        bg = bitgen()
        bg.state = dec(data["st"])
        return np.random.Generator(bg)
    if "tt" in data:
        import numpy as np
        import torch

        dt = getattr(torch, str(data["tt"]), None)
        if not isinstance(dt, torch.dtype):
            raise WireError(f"unknown torch dtype {data['tt']!r}")
        np_dt = torch.empty(0, dtype=dt).numpy().dtype
        shape = tuple(int(n) for n in data["s"])
        arr = np.frombuffer(_unb64(data["b"]), dtype=np_dt).reshape(shape).copy()
        return torch.from_numpy(arr).requires_grad_(bool(data.get("grad")) and dt.is_floating_point)
    if "tg" in data:
        import torch

        g = torch.Generator()
        g.set_state(torch.frombuffer(bytearray(_unb64(data["tg"])), dtype=torch.uint8))
        return g
    if "ref" in data:
        mod, _, qual = str(data["ref"]).partition(":")
        if allowed_refs is not None and mod.split(".")[0] not in allowed_refs:
            raise WireError(f"refused reference {data['ref']!r}")
        obj = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
        return obj
    if ("rf" in data or "cb" in data) and callable_hook is not None:
        return callable_hook(data)
    raise WireError(f"malformed message: unknown tag {sorted(data)[:3]}")


def _hashable(key):
    if isinstance(key, list):
        return tuple(_hashable(k) for k in key)
    return key


def dumps(obj) -> str:
    text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    if len(text) > MAX_BYTES:
        raise WireError(f"a message of {len(text) / 2**20:.0f} MB is over the limit of {MAX_BYTES >> 20} MB")
    return text


def loads(text: str):
    if len(text) > MAX_BYTES:
        raise WireError(f"a message of {len(text) / 2**20:.0f} MB is over the limit of {MAX_BYTES >> 20} MB")
    return json.loads(text)


def error_of(exc: BaseException) -> dict:
    """``{"ename", "evalue"}`` of an exception (its class name and message)."""
    return {"ename": type(exc).__name__, "evalue": str(exc)[:20000]}


_ERRORS: dict[str, type] = {}


def exception(err: dict) -> BaseException:
    """An exception to raise for ``{"ename", "evalue"}``: the builtin class of that name when
    there is one (``ValueError``), else a class of that name made here (``DelegationError``)."""
    name = str(err.get("ename", "Exception"))
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        if name not in _ERRORS:
            _ERRORS[name] = type(name if name.isidentifier() else "RemoteError", (Exception,), {})
        cls = _ERRORS[name]
    try:
        return cls(err.get("evalue", ""))
    except Exception:  # an exception class with a signature of its own
        return RuntimeError(f"{name}: {err.get('evalue', '')}")


# ------------------------------------------------------------ in the student's kernel
class Server:
    """Installed in the student's kernel as ``__td_rpc__`` before the first cell.

    ``describe(names)`` says what each name of the notebook is (module, library function,
    student function, value); ``call(request)`` calls one of the student's functions (through
    ``td_lib.own_work.own_work`` when the request names the exercise) and leaves the JSON reply
    in ``out``. A callable argument sent by the runner becomes a stub that asks the grader to
    call it (``input`` on the kernel's stdin channel)."""

    def __init__(self, ns: dict):
        self.ns = ns
        self.out = ""

    def describe(self, names_json: str) -> None:
        info = {}
        for name in loads(names_json):
            if name not in self.ns:
                info[name] = {"kind": "missing"}
                continue
            obj = self.ns[name]
            if type(obj).__name__ == "module":
                info[name] = {"kind": "module", "module": obj.__name__}
            elif callable(obj) and not isinstance(obj, type):
                ref = _ref_of(obj)
                info[name] = {"kind": "ref", "ref": ref} if ref else {"kind": "function"}
            else:
                try:
                    info[name] = {"kind": "value", "value": encode(obj, self._remote_name)}
                except WireError as e:
                    info[name] = {"kind": "unreadable", "why": str(e)}
        self.out = dumps(info)

    def _remote_name(self, obj):
        ref = _ref_of(obj)
        if ref is not None:
            return {"ref": ref}
        for k, v in self.ns.items():
            if v is obj and not k.startswith("_"):
                return {"rf": k}
        raise WireError(f"a function of your notebook that is not defined under a name ({obj!r}) cannot be sent")

    def _callable(self, tagged):
        if "rf" in tagged:
            return self.ns[tagged["rf"]]
        n = tagged["cb"]

        def callback(*args, **kwargs):
            reply = loads(input(dumps({"cb": n, "args": encode(list(args), self._remote_name),
                                       "kwargs": encode(kwargs, self._remote_name)})))
            if "err" in reply:
                raise exception(reply["err"])
            return decode(reply["ok"], self._callable)

        return callback

    def call(self, request_json: str) -> None:
        self.out = ""
        try:
            req = loads(request_json)
            fn = self.ns.get(req["name"])
            if fn is None:
                raise NameError(f"name {req['name']!r} is not defined")
            if req.get("exercise"):
                fn = importlib.import_module("td_lib.own_work").own_work(fn, req["exercise"])
            args = decode(req["args"], self._callable)
            kwargs = decode(req["kwargs"], self._callable)
            result = fn(*args, **kwargs)
            after = {i: encode(a) for i, a in enumerate(args) if _mutable(a)}
            self.out = dumps({"ok": encode(result, self._remote_name), "after": after})
        except BaseException as exc:  # noqa: BLE001 - every failure of the student's code is reported
            self.out = dumps({"err": error_of(exc)})


def _kind(value) -> str:
    return type(value).__module__ + "." + type(value).__name__


#: argument types a call may change in place: sent back after the call, copied into the caller's
MUTABLE = ("numpy.ndarray", "torch.Tensor", "numpy.random._generator.Generator", "torch.Generator")


def _mutable(value) -> bool:
    return _kind(value) in MUTABLE


def copy_into(target, new) -> None:
    """Make ``target`` (an argument of a :data:`MUTABLE` type) hold ``new``, its state after the call."""
    kind = _kind(target)
    if kind == "numpy.ndarray":
        import numpy as np

        if target.shape == np.shape(new) and target.flags.writeable:
            np.copyto(target, new, casting="unsafe")
    elif kind == "torch.Tensor":
        import torch

        if tuple(target.shape) == tuple(new.shape):
            with torch.no_grad():
                target.copy_(new)
    elif kind == "numpy.random._generator.Generator":
        target.bit_generator.state = new.bit_generator.state
    elif kind == "torch.Generator":
        target.set_state(new.get_state())
