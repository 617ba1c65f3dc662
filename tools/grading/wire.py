"""The data channel between a student's kernel and the trusted test runner (tools/grading/remote_tests.py).

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

One direction of authority: the trusted side asks, the kernel only answers the request that is
pending, tagged with its id. What the kernel sends is checked against :func:`check_reply`,
:func:`check_describe` and :func:`check_callback` before anything reads it: a reply of another
form, for an id not pending, carrying a library reference (``ref``: a name the kernel would choose
on the trusted side) or a call-back tag, or too long, is a :class:`ProtocolViolation`. The kernel
side never sends a reference: a function it returns travels as ``{"rf": name}`` of the student's
notebook, accepted only for a name the test declared (see docs/GRADING.md).

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
import re
import sys

MAX_BYTES = 64 << 20
_KINDS = "biufc"  # numpy dtype kinds that travel: bool, int, uint, float, complex


class WireError(TypeError):
    """A value that cannot travel between the student's kernel and the test runner."""


class ProtocolViolation(Exception):
    """A message from the student's kernel that is not the answer to the pending request."""


_BITGENS = frozenset({"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"})
_TORCH_DTYPES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16,
                 "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "bool": 1}
_ND = re.compile(r"[<>|=]?[biufc]([0-9]{1,2})")
_TAG_KEYS = {"f": {"f"}, "c": {"c"}, "t": {"t"}, "l": {"l"}, "d": {"d"}, "nd": {"nd", "s", "b", "scalar"},
             "ng": {"ng", "st"}, "tt": {"tt", "s", "b", "grad"}, "tg": {"tg"}, "rf": {"rf"}}


def _violation(why: str) -> ProtocolViolation:
    return ProtocolViolation(why)


def check_data(data, names: frozenset = frozenset(), _depth: int = 0) -> None:
    """Raise :class:`ProtocolViolation` unless ``data`` is a value as the kernel's side of
    :func:`encode` writes it: JSON scalars, tagged containers, arrays, tensors and generators,
    and functions only as ``{"rf": name}`` with ``name`` in ``names`` (the student's functions
    the test declared). Never a library reference (``ref``) or a call-back (``cb``)."""
    if _depth > 50:
        raise _violation("a value nested more than 50 levels deep")
    if data is None or isinstance(data, (bool, int, float, str)):
        return
    if not isinstance(data, dict) or len(data) == 0:
        raise _violation(f"a {type(data).__name__} where a tagged value was expected")
    tag = next((k for k in _TAG_KEYS if k in data), None)
    if tag is None or not set(data) <= _TAG_KEYS[tag]:
        raise _violation(f"an unknown value form with the keys {sorted(map(str, data))[:5]}")
    sub = lambda x: check_data(x, names, _depth + 1)  # noqa: E731
    body = data[tag]
    if tag == "f":
        if body not in ("inf", "-inf", "nan"):
            raise _violation("a tagged float that is not inf or nan")
    elif tag in ("c", "t", "l"):
        if not isinstance(body, list) or (tag == "c" and len(body) != 2):
            raise _violation(f"a malformed {tag!r} value")
        for x in body:
            sub(x)
    elif tag == "d":
        if not isinstance(body, list) or not all(isinstance(kv, list) and len(kv) == 2 for kv in body):
            raise _violation("a malformed dict")
        for k, v in body:
            sub(k)
            sub(v)
    elif tag in ("nd", "tt"):
        shape, b = data.get("s"), data.get("b")
        if not isinstance(body, str) or not isinstance(b, str) or not isinstance(shape, list) \
                or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape) or len(shape) > 32:
            raise _violation(f"a malformed {'array' if tag == 'nd' else 'tensor'}")
        if tag == "tt" and body not in _TORCH_DTYPES:
            raise _violation(f"an unknown tensor dtype {body[:40]!r}")
        m = _ND.fullmatch(body) if tag == "nd" else None
        if tag == "nd" and m is None:
            raise _violation(f"an array of dtype {body[:40]!r} (numbers only)")
        itemsize = int(m.group(1)) if m else _TORCH_DTYPES[body]
        count = 1
        for n in shape:
            count *= n
        if len(b) % 4 or len(b) // 4 * 3 - b[-2:].count("=") != count * itemsize:
            raise _violation(f"an array whose {len(b)} characters of data do not hold its shape {shape[:8]}")
    elif tag == "ng":
        if body not in _BITGENS:
            raise _violation(f"an unknown random generator {str(body)[:40]!r}")
        sub(data["st"])
    elif tag == "tg":
        if not isinstance(body, str):
            raise _violation("a malformed torch generator")
    elif tag == "rf":
        if body not in names:
            raise _violation(f"a function named {str(body)[:60]!r}, which the test did not ask for")


def _check_keys(msg, required: set, optional: set = frozenset()) -> dict:
    if not isinstance(msg, dict) or not required <= set(msg) or not set(msg) <= required | set(optional):
        keys = sorted(map(str, msg))[:8] if isinstance(msg, dict) else type(msg).__name__
        raise _violation(f"a message of the wrong form ({keys})")
    return msg


def _check_error(err) -> None:
    _check_keys(err, {"ename", "evalue"})
    if not isinstance(err["ename"], str) or not isinstance(err["evalue"], str) or len(err["ename"]) > 200:
        raise _violation("a malformed error")


def parse(text) -> dict:
    """A message from the kernel, parsed: JSON of at most :data:`MAX_BYTES` (else a violation)."""
    if not isinstance(text, str):
        raise _violation(f"a {type(text).__name__} where a JSON message was expected")
    if len(text) > MAX_BYTES:
        raise _violation(f"a message of {len(text) / 2**20:.0f} MB, over the limit of {MAX_BYTES >> 20} MB")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise _violation(f"a message that is not JSON ({type(e).__name__})") from None


def check_reply(msg, call_id: int, n_args: int, names: frozenset) -> dict:
    """The kernel's answer to call ``call_id``: ``{"id", "ok", "after"}`` or ``{"id", "err"}``."""
    if isinstance(msg, dict) and "err" in msg:
        _check_keys(msg, {"id", "err"})
        _check_error(msg["err"])
    else:
        _check_keys(msg, {"id", "ok", "after"})
        check_data(msg["ok"], names)
        after = msg["after"]
        if not isinstance(after, dict) or not all(k.isdigit() and int(k) < n_args for k in after):
            raise _violation("a malformed 'after' (arguments changed in place)")
        for v in after.values():
            check_data(v)
    if msg["id"] != call_id or isinstance(msg["id"], bool):
        raise _violation(f"an answer to request {str(msg['id'])[:20]}, while request {call_id} was pending")
    return msg


def check_describe(msg, req_id: int, asked: list[str]) -> dict:
    """The kernel's answer to 'what are these names': each asked name a function, a value
    (data only), missing or unreadable; nothing else."""
    _check_keys(msg, {"id", "info"})
    if msg["id"] != req_id or isinstance(msg["id"], bool):
        raise _violation(f"an answer to request {str(msg['id'])[:20]}, while request {req_id} was pending")
    info = msg["info"]
    if not isinstance(info, dict) or set(info) != set(asked):
        raise _violation("an answer about other names than the ones asked")
    for name, entry in info.items():
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind == "value":
            _check_keys(entry, {"kind", "value"})
            check_data(entry["value"])
        elif kind == "unreadable":
            _check_keys(entry, {"kind", "why"})
            if not isinstance(entry["why"], str):
                raise _violation("a malformed reason")
        elif kind in ("function", "missing"):
            _check_keys(entry, {"kind"})
        else:
            raise _violation(f"the name {name!r} described as {str(kind)[:40]!r}")
    return msg


def check_callback(msg, call_id: int, registered: set) -> dict:
    """A call-back request from the kernel during call ``call_id``: one of the callables the
    trusted side passed to that call (``cb`` in ``registered``), with data arguments."""
    _check_keys(msg, {"id", "cb", "args", "kwargs"})
    if msg["id"] != call_id or isinstance(msg["id"], bool):
        raise _violation(f"a call-back for request {str(msg['id'])[:20]}, while request {call_id} was pending")
    if isinstance(msg["cb"], bool) or msg["cb"] not in registered:
        raise _violation(f"a call-back to {str(msg['cb'])[:20]}, which this call did not pass")
    check_data(msg["args"])
    check_data(msg["kwargs"])
    return msg


def callbacks_in(data) -> set:
    """The call-back numbers (``{"cb": n}``) that ``data`` (encoded by the trusted side) passes."""
    found: set = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if set(x) == {"cb"}:
                found.add(x["cb"])
            else:
                stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return found


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
#: builtin exceptions whose class a test may catch (``except ValueError``); an error of any other
#: name (``StopIteration`` too: it would end a test's loop early) arrives as a plain RemoteError
SAFE_ERRORS = frozenset({
    "ValueError", "TypeError", "ArithmeticError", "ZeroDivisionError", "OverflowError", "FloatingPointError",
    "IndexError", "KeyError", "LookupError", "NotImplementedError", "RuntimeError", "AssertionError", "NameError",
    "AttributeError", "RecursionError", "MemoryError", "OSError", "TimeoutError", "ImportError",
    "ModuleNotFoundError", "UnboundLocalError"})


class RemoteError(Exception):
    """An exception raised on the other side of the channel; its class name is the one sent."""


def exception(err: dict) -> BaseException:
    """An exception to raise for ``{"ename", "evalue"}``: a :class:`RemoteError` of that class
    name, which is also the builtin of that name when it is one a test may catch
    (:data:`SAFE_ERRORS`: ``except ValueError`` still works). The name is only a label: it never
    selects anything else on the receiving side."""
    name = str(err.get("ename", "Exception"))[:100]
    if name not in _ERRORS:
        base = getattr(builtins, name) if name in SAFE_ERRORS else None
        label = name if name.isidentifier() else "RemoteError"
        cls = type(label, (base, RemoteError) if base else (RemoteError,), {"__module__": "builtins"})
        if len(_ERRORS) < 1000:
            _ERRORS[name] = cls
    else:
        cls = _ERRORS[name]
    return cls(str(err.get("evalue", ""))[:20000])


# ------------------------------------------------------------ in the student's kernel
def _no_input(*args, **kwargs):
    raise RuntimeError("input() is not available while your function is graded: a graded function takes its "
                       "data from its arguments")


class Server:
    """Installed in the student's kernel as ``__td_rpc__`` before the first cell.

    It only answers: ``describe(request)`` says, for each name the grader asks about, whether
    the notebook defines it as a function, as a value (its data), or not at all;
    ``call(request)`` calls one of the student's functions (through
    ``td_lib.own_work.own_work`` when the request names the exercise). Each answer is JSON in
    ``out``, tagged with the request's id. During a call, ``input()`` raises: the only use of
    the kernel's stdin channel is a call-back stub, for a callable the test passed (the grader
    checks that each such request names a callable of the pending call, with data arguments)."""

    def __init__(self, ns: dict):
        self.ns = ns
        self.out = ""

    def describe(self, request_json: str) -> None:
        req = loads(request_json)
        info = {}
        for name in req["names"]:
            if name not in self.ns:
                info[name] = {"kind": "missing"}
                continue
            obj = self.ns[name]
            if callable(obj) and not isinstance(obj, type):
                info[name] = {"kind": "function"}
                continue
            try:
                info[name] = {"kind": "value", "value": encode(obj, _refuse_callable)}
            except WireError as e:
                info[name] = {"kind": "unreadable", "why": str(e)[:2000]}
        self.out = dumps({"id": req["id"], "info": info})

    def _remote_name(self, obj):
        for k, v in self.ns.items():
            if v is obj and not k.startswith("_"):
                return {"rf": k}
        raise WireError(f"a function ({obj!r}) cannot be sent to the grader: return numbers or arrays")

    def _callable(self, tagged, call_id, ask):
        if "rf" in tagged:
            return self.ns[tagged["rf"]]
        n = tagged["cb"]

        def callback(*args, **kwargs):
            reply = loads(ask(dumps({"id": call_id, "cb": n, "args": encode(list(args), _refuse_callable),
                                     "kwargs": encode(kwargs, _refuse_callable)})))
            if "err" in reply:
                raise exception(reply["err"])
            return decode(reply["ok"], lambda tg: self._callable(tg, call_id, ask))

        return callback

    def call(self, request_json: str) -> None:
        self.out = ""
        req = loads(request_json)
        ask, builtins.input = builtins.input, _no_input  # the stub keeps the channel; input() raises
        try:
            fn = self.ns.get(req["name"])
            if fn is None:
                raise NameError(f"name {req['name']!r} is not defined")
            if req.get("exercise"):
                fn = importlib.import_module("td_lib.own_work").own_work(fn, req["exercise"])
            hook = lambda tg: self._callable(tg, req["id"], ask)  # noqa: E731
            args = decode(req["args"], hook)
            kwargs = decode(req["kwargs"], hook)
            result = fn(*args, **kwargs)
            after = {str(i): encode(a, _refuse_callable) for i, a in enumerate(args) if _mutable(a)}
            self.out = dumps({"id": req["id"], "ok": encode(result, self._remote_name), "after": after})
        except BaseException as exc:  # noqa: BLE001 - every failure of the student's code is reported
            self.out = dumps({"id": req["id"], "err": error_of(exc)})
        finally:
            builtins.input = ask


def _refuse_callable(obj):
    raise WireError(f"a function ({type(obj).__name__}) cannot be sent to the grader here: send numbers or arrays")


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
