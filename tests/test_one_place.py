"""One idea, one place: a known formula written a second time fails here, found by its shape.

``tests/test_layers.py`` forbids calls by name (quadrature rules, tqdm, thread settings); this
file looks for the *formula* itself, however it is spelled: each known formula has a matcher
(regular expressions over the code of one function, comments and docstrings removed, or an
``ast`` walk), the files where it may live (its home), and a message naming ``file:line`` and
what to call instead. Each matcher is shown to catch a planted copy and to pass a near miss.
Scanned: ``td_lib`` and ``checks`` (not ``checks/fixtures``: the fake students' answers are
second copies on purpose).
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------- code units
def _code_lines(text: str) -> list[str]:
    """The source lines with comments and docstrings blanked (line numbers kept)."""
    lines = text.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            for i in range(body[0].lineno - 1, body[0].end_lineno):
                lines[i] = ""
    return lines


@functools.cache
def _units(text: str) -> list[tuple[int, list[str]]]:
    """``(first line, code lines)`` of each top-level function and method, and of the rest."""
    tree, lines = ast.parse(text), _code_lines(text)
    spans = []
    for n in tree.body:
        inner = n.body if isinstance(n, ast.ClassDef) else [n]
        spans += [(m.lineno, m.end_lineno) for m in inner if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out, inside = [], set()
    for lo, hi in spans:
        out.append((lo, lines[lo - 1:hi]))
        inside.update(range(lo, hi + 1))
    out.append((1, ["" if i + 1 in inside else line for i, line in enumerate(lines)]))
    return out


def _grep(text: str, key: str, partners: list[str] = (), window: int | None = None) -> list[int]:
    """Lines matching ``key`` in a unit where one of ``partners`` also matches (within ``window``
    lines of it when given; anywhere in the unit otherwise)."""
    hits = []
    for first, lines in _units(text):
        for i, line in enumerate(lines):
            if not re.search(key, line):
                continue
            near = lines if window is None else lines[max(0, i - window): i + window + 1]
            if not partners or any(re.search(p, "\n".join(near)) for p in partners):
                hits.append(first + i)
    return sorted(set(hits))


# ---------------------------------------------------------------------------------------------- matchers
def arccos_kernel(text: str) -> list[int]:
    """``arccos`` with ``sqrt(1 - s**2)``, ``(pi - theta) cos theta + sin theta`` or ``pi - arccos(s)``."""
    sqrt_form = r"sqrt\(\s*1(\.0)?\s*-\s*[\w.\[\]]+\s*(\*\*\s*2|\*\s*[\w.\[\]]+)\s*\)"
    pi_cos = r"pi\s*-\s*\w+\s*\)\s*\*\s*(np\.|math\.|torch\.)?cos\("
    trig_form = rf"{pi_cos}(.|\n)*\bsin\(|\bsin\((.|\n)*{pi_cos}"
    step_form = r"pi\s*-\s*(np\.|math\.|torch\.)?(arccos|acos)\("
    return _grep(text, r"\b(arccos|acos)\s*\(", [sqrt_form, trig_form, step_form])


_HALF_SQUARE = (r"\bexp\(\s*-\s*(0?\.5\s*\*|[^\n]*(\*\*\s*2|\b(\w+)\s*\*\s*\3\b)[^\n]*"
                r"(/\s*2(\.0)?\b|\*\s*0?\.5\b))")  # exp(-x**2 / 2), exp(-0.5 * ...), exp(-x * x / 2)
_NORMALISER = (r"sqrt\(\s*2(\.0)?\s*[*/]\s*(np\.|math\.|torch\.)?pi\s*\)|"
               r"\(\s*2(\.0)?\s*\*\s*(np\.|math\.)?pi\s*\)\s*\*\*\s*0?\.5|SQRT_?2_?PI|SQRT_2_OVER_PI")


def gaussian_density(text: str) -> list[int]:
    """``exp(-x**2 / 2)`` (any spelling of the half square) in a function that divides by ``sqrt(2 pi)``."""
    return _grep(text, _HALF_SQUARE, [_NORMALISER])


def log_schedule(text: str) -> list[int]:
    """``geomspace``/``logspace`` made into integer steps or recording times (a leading 0)."""
    to_int = (r"astype\(\s*(int|np\.int)|np\.round|\bround\(|np\.unique|np\.floor|np\.ceil|r_\[\s*0\b|"
              r"concatenate\(\s*\[\s*\[\s*0|\[\s*0(\.0?)?\s*\]\s*\+")
    return _grep(text, r"\b(geomspace|logspace)\(", [to_int], window=2)


_BAR_MAKERS = {"tqdm", "trange", "bar", "progress", "_Bar", "tqdm_notebook"}


def hand_bar(text: str) -> list[int]:
    """``<bar>.update(n)`` on a progress bar (a name with "bar", or made by tqdm/bar/progress)."""
    hits = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        made = set()
        for n in ast.walk(node):
            calls = []
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                calls = [(n.value, t) for t in n.targets]
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                calls = [(w.context_expr, w.optional_vars) for w in n.items if isinstance(w.context_expr, ast.Call)]
            for call, target in calls:
                f = call.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in _BAR_MAKERS and isinstance(target, ast.Name):
                    made.add(target.id)
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update" \
                    and isinstance(n.func.value, ast.Name):
                if n.func.value.id in made or "bar" in n.func.value.id.lower():
                    hits.append(n.lineno)
    return sorted(set(hits))


def kernel_gd(text: str) -> list[int]:
    """Kernel gradient descent/flow in closed form: ``expm(-...)``, ``matrix_power``, ``(1 - eta lam)**s``,
    ``exp(-eta lam t)``, ``exp(-outer(lam, t))``, ``expm1(s log1p(-eta lam))``."""
    forms = [r"\bexpm\(", r"matrix_power\(", r"expm1\([^\n]*log1p\(",
             r"\(\s*1(\.0)?\s*-\s*[^()\n]*\b(eta|lr)\w*\b[^()\n]*\)\s*(\[[^\]]*\]\s*)?\*\*\s*\(?[A-Za-z_]",
             r"\bexp(m1)?\(\s*-\s*[^)\n]*\b(eta|lr)\w*\b[^)\n]*\b(lam\w*|eig\w*|mu\w*|evals?|s2)\b",
             r"\bexp(m1)?\(\s*-\s*(np\.|torch\.)?outer\("]
    return _grep(text, "|".join(f"(?:{f})" for f in forms))


ACTIVATION_NAMES = {"relu", "leaky_relu", "gelu", "tanh", "softplus", "erf", "erf_sqrt2", "linear", "sigmoid",
                    "quadratic", "identity", "abs", "sign", "elu", "silu"}
_MODULES = {"torch", "F", "nn", "np", "numpy", "special", "functional", "activations"}


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


_FUNCTION_VALUE = (ast.Lambda, ast.Name, ast.Attribute)


def _hands_out_function(branch: ast.If | ast.IfExp) -> bool:
    """The branch returns or assigns a function object (``torch.tanh``, ``lambda z: ...``), not a call."""
    if isinstance(branch, ast.IfExp):
        return isinstance(branch.body, _FUNCTION_VALUE)
    return any(isinstance(st, (ast.Return, ast.Assign)) and isinstance(st.value, _FUNCTION_VALUE)
               for st in branch.body)


def activation_resolver(text: str) -> list[int]:
    """A table or an if-chain from activation names to functions, or ``getattr(torch, name)``."""
    hits = []
    tree = ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, ast.Dict):
            keys = {k.value for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(keys & ACTIVATION_NAMES) >= 2 and not all(_literal(v) for v in n.values):
                hits.append(n.lineno)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" and len(n.args) >= 2 \
                and not isinstance(n.args[1], ast.Constant):
            base = n.args[0]
            name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if name in _MODULES:
                hits.append(n.lineno)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = set()  # activation names a branch of this function turns into a function
            for b in ast.walk(n):
                if isinstance(b, (ast.If, ast.IfExp)) and _hands_out_function(b):
                    names |= {c.value for cmp in ast.walk(b.test) if isinstance(cmp, ast.Compare)
                              for c in [cmp.left, *cmp.comparators] if isinstance(c, ast.Constant)} & ACTIVATION_NAMES
            if len(names) >= 2:
                hits.append(n.lineno)
    return sorted(set(hits))


_MASK_DEF = r"\.df\(|heaviside|>\s*0(\.0)?\b|\bstep\("  # 1[w.x > 0], ReLU'(w.x)
_GRAM_TIMES = r"\.T\s*\)\s*\*|\*\s*\([^\n]*@[^\n]*\.T\b"  # (A @ B.T) * ..., ... * (A @ B.T)


def circle_ntk(text: str) -> list[int]:
    """The finite-width first-layer NTK: a Gram of ReLU masks ``1[w.x > 0]`` times the input Gram."""
    hits = []
    for first, lines in _units(text):
        code = "\n".join(lines)
        names = {x.strip() for m in re.finditer(r"^\s*([\w, ]+?)\s*=\s*(.*)$", code, re.M)
                 if re.search(_MASK_DEF, m.group(2)) and not re.search(r"bmm\(|einsum\(|matmul\(", m.group(2))
                 for x in m.group(1).split(",")}  # masks, not tangent features built from them
        inline = [r"[\w.]*\.df\([^()]*\)", r"\([^()]*(\.df\([^()]*\)|>\s*0(\.0)?)[^()]*\)(\.\w+\([^()]*\))?"]
        mask = "(" + "|".join([*(rf"\b{re.escape(n)}\b" for n in names if n), *inline]) + ")"
        if re.search(_GRAM_TIMES, code):
            hits += [first + i for i, line in enumerate(lines) if re.search(rf"{mask}\s*@\s*{mask}\.T\b", line)]
    return sorted(set(hits))


# ---------------------------------------------------------------------------------------------- the formulas
@dataclass(frozen=True)
class Formula:
    name: str
    find: Callable[[str], list[int]]
    homes: tuple[str, ...]  # files (repository-relative) where the formula lives
    call: str               # what a second copy should call instead
    planted: str            # a copy the matcher must catch
    near_miss: str          # similar code it must let pass
    scope: tuple[str, ...] = ("td_lib", "checks")  # the trees searched for copies


FORMULAS = [
    Formula("the arc-cosine kernel", arccos_kernel, ("td_lib/core/gaussian.py",),
            "td_lib.core.gaussian.arccos_kernel(s, degree=0 or 1)",
            "def k1(s):\n    th = np.arccos(s)\n    return (np.sqrt(1 - s**2) + (np.pi - th) * s) / (2 * np.pi)\n",
            "def angle(a, b):\n    return np.degrees(np.arccos(a @ b))\n"),
    Formula("the Gaussian density by hand", gaussian_density,
            ("td_lib/core/gaussian.py", "td_lib/core/activations.py"),
            "scipy.stats.norm.pdf, or td_lib.core.gaussian (gaussian_expectation, gauss_normal_nodes)",
            "def phi(x):\n    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)\n",
            "def decay(x, t):\n    return np.exp(-x ** 2 * t) / 2\n"),
    Formula("a log-spaced checkpoint schedule", log_schedule, ("td_lib/core/run.py",),
            "td_lib.core.run.checkpoints(end, num=...)",
            "def times(T):\n    return np.unique(np.r_[0, np.geomspace(1, T, 40).astype(int)])\n",
            "def grid():\n    etas = np.geomspace(1e-4, 3.0, 41)\n    return etas\n"),
    Formula("a hand-updated progress bar", hand_bar, ("td_lib/core/run.py", "td_lib/core/runtime.py"),
            "td_lib.core.run.ticker (with ticker(n, progress, label) as advance: advance(k)), "
            "or td_lib.core.runtime.bar over an iterable",
            "def loop(n):\n    pb = tqdm(total=n)\n    for i in range(n):\n        pb.update(1)\n",
            "def merge(d):\n    out = {}\n    out.update(d)\n    return out\n"),
    Formula("kernel gradient descent in closed form", kernel_gd, ("td_lib/kernel_flow.py",),
            "td_lib.kernel_flow (gd_filter, flow_filter, kernel_gd_predict, kernel_flow_predict, "
            "training_residual)",
            "def gd(K, y, eta, s):\n    lam, U = np.linalg.eigh(K)\n"
            "    return U @ ((1 - (1 - eta * lam) ** s) * (U.T @ y))\n",
            "def shrink(c, n):\n    return (1 - c) ** 2 / n\n"),
    Formula("an activation resolver", activation_resolver, ("td_lib/core/activations.py",),
            "td_lib.core.activations.get(name)",
            "ACTS = {'relu': lambda z: np.maximum(z, 0), 'tanh': np.tanh}\n",
            "COLOURS = {'relu': 'C0', 'tanh': 'C1'}\nfor act in ('relu', 'tanh'):\n    print(act)\n"),
    # early_linear/fcn.py's ntk_at_init is the first-layer NTK of Hu et al.'s network (any activation,
    # readout weights, inputs in R^d, torch): the circle kernel is its ReLU case, not a copy of it
    Formula("the finite-width circle NTK", circle_ntk, ("td_lib/kernels.py", "td_lib/early_linear/fcn.py"),
            "td_lib.kernels.finite_width_kernel (td_lib.circle_net.empirical_ntk for the inputs (cos, sin, 1))",
            "def entk(X, W):\n    m = (X @ W.T > 0).astype(float)\n    return (X @ X.T) * (m @ m.T) / W.shape[0]\n",
            "def gram(X, W):\n    h = np.maximum(X @ W.T, 0)\n    return (h @ h.T) / W.shape[0]\n"),
]
IDS = [f.name.replace(" ", "_") for f in FORMULAS]


def _files(scope: tuple[str, ...]) -> list[Path]:
    return sorted(p for top in scope for p in (REPO / top).rglob("*.py")
                  if "__pycache__" not in p.parts and "fixtures" not in p.relative_to(REPO).parts)


@pytest.mark.parametrize("formula", FORMULAS, ids=IDS)
def test_the_formula_lives_in_one_place(formula: Formula):
    copies = []
    for p in _files(formula.scope):
        rel = str(p.relative_to(REPO))
        if rel not in formula.homes:
            copies += [f"{rel}:{line}" for line in formula.find(p.read_text())]
    assert not copies, (f"a second copy of {formula.name} (its home: {', '.join(formula.homes)}); "
                        f"call {formula.call} instead:\n  " + "\n  ".join(copies))


@pytest.mark.parametrize("formula", FORMULAS, ids=IDS)
def test_the_matcher_catches_a_planted_copy_and_passes_a_near_miss(formula: Formula):
    assert formula.find(formula.planted), f"the matcher of {formula.name} misses:\n{formula.planted}"
    assert not formula.find(formula.near_miss), f"the matcher of {formula.name} flags:\n{formula.near_miss}"


# Other spellings of the same formulas, each of which must be caught.
SPELLINGS = [
    (arccos_kernel, "def k(c):\n    th = math.acos(c)\n"
                    "    return ((math.pi - th) * math.cos(th) + math.sin(th)) / math.pi\n"),
    (arccos_kernel, "def k0(s):\n    return (np.pi - np.arccos(s)) / (2 * np.pi)\n"),
    (arccos_kernel, "def k1(s):\n    t = np.arccos(s)\n    return np.sqrt(1.0 - s * s) + (np.pi - t) * s\n"),
    (gaussian_density, "def pdf(t, m, s):\n    return np.exp(-0.5 * ((t - m) / s) ** 2) / (s * SQRT2PI)\n"),
    (gaussian_density, "def f(z):\n    return np.exp(-z**2 * 0.5) / (2 * np.pi) ** 0.5\n"),
    (gaussian_density, "def g(z):\n    return np.sqrt(2 / np.pi) * np.exp(-z ** 2 / 2)\n"),
    (log_schedule, "def rec(T):\n    ts = np.logspace(0, np.log10(T), 30)\n    return np.unique(np.round(ts))\n"),
    (log_schedule, "def rec(T):\n    return np.concatenate([[0], np.geomspace(1, T, 9)])\n"),
    (hand_bar, "def loop(n):\n    with tqdm(total=n) as t:\n        t.update(3)\n"),
    (hand_bar, "def loop(n, progress):\n    pbar = progress(range(n))\n    pbar.update(1)\n"),
    (kernel_gd, "def flow(K, t):\n    return scipy.linalg.expm(-t * K)\n"),
    (kernel_gd, "def gd(K, eta, s):\n    return np.linalg.matrix_power(np.eye(len(K)) - eta * K, s)\n"),
    (kernel_gd, "def modes(lam, t, eta):\n    return np.exp(-eta * lam * t)\n"),
    (kernel_gd, "def resid(lam, t):\n    return np.exp(-np.outer(lam, t))\n"),
    (activation_resolver, "def act(name):\n    if name == 'relu':\n        return torch.relu\n"
                          "    elif name == 'tanh':\n        return torch.tanh\n"),
    (activation_resolver, "def act(name):\n    return getattr(torch, name)\n"),
    (activation_resolver, "def act(n):\n    f = np.tanh if n == 'tanh' else None\n"
                          "    g = (lambda z: z) if n == 'linear' else f\n    return g\n"),
    (circle_ntk, "def ntk(x1, x2, w):\n    m1, m2 = step(x1 @ w.T), step(x2 @ w.T)\n"
                 "    return (x1 @ x2.T) * (m1 @ m2.T) / len(w)\n"),
    (circle_ntk, "def ntk(X, W):\n    K = (X @ X.T)\n    return K * (act.df(X @ W.T) @ act.df(X @ W.T).T)\n"),
]


@pytest.mark.parametrize("find, snippet", SPELLINGS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SPELLINGS)])
def test_the_matchers_catch_other_spellings(find, snippet):
    assert find(snippet), f"{find.__name__} misses:\n{snippet}"


@pytest.mark.parametrize("formula", FORMULAS, ids=IDS)
def test_each_home_holds_its_formula(formula: Formula):
    """The home is where the matcher finds the formula (a moved home must be said here)."""
    assert any(formula.find((REPO / h).read_text()) for h in formula.homes), (
        f"none of {formula.homes} holds {formula.name} any more: update its home in tests/test_one_place.py")


def test_the_matchers_ignore_comments_and_docstrings():
    text = ('def f(s):\n    """th = arccos(s); sqrt(1 - s**2)"""\n    # np.geomspace(1, 9, 3).astype(int)\n'
            "    return s\n")
    assert not any(f.find(text) for f in FORMULAS)
