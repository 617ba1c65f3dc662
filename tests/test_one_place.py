"""One idea, one place: a known formula written a second time fails here, found by its shape.

``tests/test_layers.py`` forbids calls by name (quadrature rules, tqdm, thread settings); this
file looks for the *formula* itself, however it is spelled: each known formula has a matcher
(regular expressions over the code of one function, comments and docstrings removed, or an
``ast`` walk), the files where it may live (its home), and a message naming ``file:line`` and
what to call instead. Each matcher is shown to catch a planted copy and to pass a near miss, and
the whole check to fail on a tree holding a planted copy.
Scanned: ``td_lib`` and ``checks`` (not ``checks/fixtures``: the fake students' answers are
second copies on purpose); for the tools' concepts (nbgrader's markers, ``hidden_lines``) also
``tools``. A copy someone else is removing is *pending* (file and reason): tolerated, but the test
fails once it is gone, so that the entry goes with it.
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


# the CNN/LCN SGD update (eqs 36, 68): eta / sqrt(k_s D) times g'(lambda_hat), or the noisy error
_ETA_SCALE = r"\b(eta|lr)\w*\b[^\n]*/\s*(math\.|np\.|torch\.)?sqrt\(\s*(self\.)?k\w*\s*\*\s*(self\.)?D\b"
_DERIVATIVE = r"\b(gp|dg|g_?prime|dact)\w*\b|\.(gp|df)\(|\bdf\("
_NOISY_ERROR = r"\bsigma\w*\s*\*\s*xi\w*\b"


def sgd_update(text: str) -> list[int]:
    """The CNN/LCN SGD step: ``eta / sqrt(k_s D)`` (or ``eta * delta / sqrt(k_s * D)``) in a function
    using ``g'``, or the label ``sum g(lambda) + sigma xi`` minus the output (``.sum(``) on one line."""
    return sorted(set(_grep(text, _ETA_SCALE, [_DERIVATIVE]) + _grep(text, _NOISY_ERROR, [r"\bsum\(|\.sum\("],
                                                                     window=0)))


def _expressions(text: str, patterns: list[str]) -> list[int]:
    """Lines of the expressions (operations and calls, unparsed without spaces) matching a pattern."""
    hits = []
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, (ast.BinOp, ast.Call)):
            code = re.sub(r"\s+", "", ast.unparse(n))
            if any(re.search(p, code) for p in patterns):
                hits.append(n.lineno)
    return sorted(set(hits))


_KAPPA4 = [r"2(\.0)?\*(?P<b>\w+)(\*\*2|\*(?P=b))/\(1(\.0)?\+(?P=b)\)(\*\*2|\*\(1(\.0)?\+(?P=b)\))",
           r"2(\.0)?\*\((?P<b>\w+)/\(1(\.0)?\+(?P=b)\)\)\*\*2"]


def kappa4(text: str) -> list[int]:
    """``-2 b**2 / (1 + b)**2`` (any spelling of the square), the fourth cumulant of ``v . x``."""
    return _expressions(text, _KAPPA4)


_SQRT = r"(\w+\.)?sqrt\("
_TWO_OVER_PI = rf"{_SQRT}2(\.0)?/(\w+\.)?pi\)"
_CROSS = [rf"{_TWO_OVER_PI}\*{_SQRT}\(?(?P<u>\w+)\*(?P<v>\w+)\)?/\(1(\.0)?\+(?P=v)\)\)",
          rf"{_SQRT}\(?(?P<u>\w+)\*(?P<v>\w+)\)?/\(1(\.0)?\+(?P=v)\)\)\*{_TWO_OVER_PI}",
          rf"{_TWO_OVER_PI}\*{_SQRT}(?P<u>\w+)\)\*{_SQRT}(?P<v>\w+)\)/{_SQRT}1(\.0)?\+(?P=v)\)",
          rf"{_SQRT}2(\.0)?\*(?P<u>\w+)\*(?P<v>\w+)/\((\w+\.)?pi\*\(1(\.0)?\+(?P=v)\)\)\)"]


def cross_term(text: str) -> list[int]:
    """``sqrt(2/pi) sqrt(b_u b_v / (1 + b_v))``, the u-v cross term of the mixed cumulant model."""
    return _expressions(text, _CROSS)


_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:#+[ \t]*)?(?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)\b")


def marker_literal(text: str) -> list[int]:
    """A string literal spelling one of nbgrader's markers as a marker (``"BEGIN HIDDEN TESTS"``,
    ``"### END SOLUTION"``, a pattern starting with one); docstrings and prose mentions pass."""
    tree = ast.parse(text)
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                   and id(n) not in prose and _MARKER.search(n.value)})


def hidden_lines_def(text: str) -> list[int]:
    """A function (or a name assigned) called ``hidden_lines`` or ``_hidden_lines``; importing it is fine."""
    named = re.compile(r"^_*hidden_lines$")
    hits = []
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and named.match(n.name):
            hits.append(n.lineno)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(x, ast.Name) and named.match(x.id) for x in targets):
                hits.append(n.lineno)
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
    pending: tuple[tuple[str, int, str], ...] = ()  # (file, lines, why): copies another change removes


TOOLS = ("tools", "td_lib", "checks")


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
    # issue 34, item 5
    Formula("the CNN/LCN SGD update", sgd_update, ("td_lib/cnn_lcn/network.py",),
            "td_lib.cnn_lcn.network.Networks.coef (the update's coefficient) or Networks.step / sgd_step",
            "def drift(net, x, xi, eta, sigma, k_s, D):\n    lam, lh = net.fields(x)\n"
            "    delta = net.g(lam).sum(-1) + sigma * xi - net.g(lh).sum(-1)\n"
            "    return (eta / math.sqrt(k_s * D)) * delta[:, None] * net.gp(lh)\n",
            "def fields(x, wh, k_s, D):\n    lh = torch.einsum('bnpld,bpld->bnp', x, wh) / math.sqrt(k_s * D)\n"
            "    return (net.g(lam).sum(-1) - net.g(lh).sum(-1)) ** 2\n"),
    Formula("the fourth cumulant kappa_4(v.x)", kappa4, ("td_lib/mixed_cumulant/model.py",),
            "td_lib.mixed_cumulant.kappa4_v(beta_v)",
            "def claims(bv):\n    k4 = -2 * bv**2 / (1 + bv) ** 2\n    return k4\n",
            "def moments(b):\n    m4 = (b * b + 6.0 * b + 3.0) / (1.0 + b) ** 2\n    return 2 * b / (1 + b)\n"),
    Formula("the u-v cross term c", cross_term, ("td_lib/mixed_cumulant/model.py",),
            "td_lib.mixed_cumulant.cross_term(beta_u, beta_v, correlated)",
            "def claims(bu, bv):\n    return math.sqrt(2 / math.pi) * math.sqrt(bu * bv / (1 + bv))\n",
            "def factors(bu, bv):\n    f1 = math.sqrt(2 / math.pi)\n    f2 = math.sqrt(bu * bv / (1 + bv))\n"
            "    return f1, f2\n"),
    Formula("an nbgrader marker string", marker_literal, ("tools/nbcore.py",),
            "tools.nbcore (HIDDEN_DELIMITERS, SOLUTION_DELIMITERS, MARKERS, BEGIN_SOL ... END_HIDDEN)",
            'BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"\n',
            'def lint(src):\n    """Regions between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``."""\n'
            '    return [f"cell without a BEGIN SOLUTION region" for m in nbcore.MARKERS if m in src]\n',
            scope=TOOLS),
    Formula("hidden_lines", hidden_lines_def, ("tools/nbcore.py",),
            "tools.nbcore.hidden_lines(source) (1-based line numbers, markers included; "
            "tools.nbcore.secret_lines for their text)",
            "def hidden_lines(source: str) -> set[str]:\n    out, inside = set(), False\n"
            "    for line in source.split('\\n'):\n        inside = inside or BEGIN in line\n    return out\n",
            "from tools.nbcore import hidden_lines  # noqa: F401\n\n\ndef secret_lines(source):\n"
            "    return {source.splitlines()[i - 1] for i in hidden_lines(source)}\n",
            scope=TOOLS),
]
IDS = [f.name.replace(" ", "_") for f in FORMULAS]


def _files(scope: tuple[str, ...], root: Path = REPO) -> list[Path]:
    return sorted(p for top in scope for p in (root / top).rglob("*.py")
                  if "__pycache__" not in p.parts and "fixtures" not in p.relative_to(root).parts)


def _copies(formula: Formula, root: Path = REPO) -> list[str]:
    """``file:line`` of every copy of ``formula`` under ``root`` outside its homes (a pending file:
    when it holds more copies than the pending ones)."""
    pending = {f: n for f, n, _ in formula.pending}
    copies = []
    for p in _files(formula.scope, root):
        rel = p.relative_to(root).as_posix()
        if rel not in formula.homes:
            lines = formula.find(p.read_text())
            if len(lines) > pending.get(rel, 0):
                copies += [f"{rel}:{line}" for line in lines]
    return copies


@pytest.mark.parametrize("formula", FORMULAS, ids=IDS)
def test_the_formula_lives_in_one_place(formula: Formula):
    copies = _copies(formula)
    assert not copies, (f"a second copy of {formula.name} (its home: {', '.join(formula.homes)}); "
                        f"call {formula.call} instead:\n  " + "\n  ".join(copies))


PENDING = [(f, path, n, why) for f in FORMULAS for path, n, why in f.pending]


def test_every_pending_copy_is_still_there():
    """A pending entry lasts as long as its copies: once they are gone, the entry must go too
    (none pending today: the list is for a copy another change is about to remove)."""
    stale = []
    for formula, path, n, why in PENDING:
        found = formula.find((REPO / path).read_text())
        if len(found) != n:
            stale.append(f"{path} holds {len(found)} lines of {formula.name}, pending: {n} ({why}): remove the "
                         f"entry (or correct its count) in the pending files of {formula.name!r}")
    assert not stale, "\n".join(stale)


@pytest.mark.parametrize("formula", FORMULAS, ids=IDS)
def test_a_planted_duplicate_fails_the_check(formula: Formula, tmp_path: Path):
    """The check itself, on a copy of the homes: silent as it is, failing once a copy is planted
    in a scanned tree (and not for a near miss)."""
    for home in formula.homes:
        (tmp_path / home).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / home).write_text((REPO / home).read_text())
    for top in formula.scope:
        (tmp_path / top).mkdir(exist_ok=True)
    assert _copies(formula, tmp_path) == []
    (tmp_path / formula.scope[-1] / "near_miss.py").write_text(formula.near_miss)
    assert _copies(formula, tmp_path) == []
    (tmp_path / formula.scope[-1] / "fixtures").mkdir()
    (tmp_path / formula.scope[-1] / "fixtures" / "answer.py").write_text(formula.planted)
    assert _copies(formula, tmp_path) == []  # fixtures are second copies on purpose
    (tmp_path / formula.scope[0] / "sub").mkdir()
    (tmp_path / formula.scope[0] / "sub" / "copy.py").write_text(formula.planted)
    found = _copies(formula, tmp_path)
    assert found and all(c.startswith(f"{formula.scope[0]}/sub/copy.py:") for c in found), found


def _first(name: str) -> Formula:
    return next(f for f in FORMULAS if f.name == name)


# Issue 34, item 5: the copies as they stood on main, each put back where it was. The check must
# fail on every one (a reintroduction is caught, not only a planted snippet).
REINTRODUCED = [
    ("the CNN/LCN SGD update", "td_lib/cnn_lcn/sgd.py",
     "def _drift(kind, *, D, P, k_s, k_t, c, S, T, eta, sigma, align, n_samples, chunk, rng):\n"
     "    with torch.no_grad():\n"
     "        while n_done < n_samples:\n"
     "            lam, lh = net.fields(x[None])\n"
     "            lam, lh = lam[0], lh[0]\n"
     "            delta = net.g(lam).sum(-1) + sigma * xi - net.g(lh).sum(-1)\n"
     "            coef = (eta / math.sqrt(k_s * D)) * delta[:, None] * net.gp(lh)  # (n, P)\n"),
    ("the fourth cumulant kappa_4(v.x)", "checks/higher_cumulants.py",
     "def claims(full: bool = False):\n    bv, bu = 10.0, 5.0\n    k4 = -2 * bv**2 / (1 + bv) ** 2\n"),
    ("the u-v cross term c", "checks/higher_cumulants.py",
     "def claims(full: bool = False):\n    c = math.sqrt(2 / math.pi) * math.sqrt(bu * bv / (1 + bv))\n"),
    ("hidden_lines", "tools/grading/nbgrader_ext.py",
     "def hidden_lines(source: str) -> set[str]:\n"
     '    """The stripped source lines inside hidden-test regions of ``source``."""\n'
     "    out, inside = set(), False\n"
     '    for line in source.split("\\n"):\n'
     "        if BEGIN in line:\n            inside = True\n"
     "        elif END in line:\n            inside = False\n"
     "        elif inside and len(line.strip()) >= MIN_LINE:\n            out.add(line.strip())\n"
     "    return out\n"),
    ("hidden_lines", "tools/live_grading/queue.py",
     'def hidden_lines(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> set[int]:\n'
     "    out, inside = set(), False\n"
     "    for i, line in enumerate(source.splitlines(), 1):\n"
     "        if begin in line:\n            inside = True\n"
     "        if inside:\n            out.add(i)\n"
     "        if end in line:\n            inside = False\n"
     "    return out\n"),
    ("an nbgrader marker string", "tools/grading/nbgrader_ext.py",
     'BEGIN, END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"\n'),
    ("an nbgrader marker string", "tools/build/pipeline.py",
     "def leaks(release_dir):\n"
     '    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):\n'
     "        pass\n"),
    ("an nbgrader marker string", "tools/build/handout.py",
     "def secret_lines(course):\n"
     '    for kind, pat in (("solution", r"### BEGIN SOLUTION\\n(.*?)### END SOLUTION"),\n'
     '                      ("hidden test", r"### BEGIN HIDDEN TESTS\\n(.*?)### END HIDDEN TESTS")):\n'
     "        pass\n"),
    ("an nbgrader marker string", "tools/live_grading/worker.py",
     'def page_leaks(page, plain):\n'
     '    return [m for m in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS") if m in plain]\n'),
]


@pytest.mark.parametrize("name, path, code", REINTRODUCED,
                         ids=[f"{n.replace(' ', '_')}-{p}" for n, p, _ in REINTRODUCED])
def test_a_reintroduced_copy_is_caught(name: str, path: str, code: str, tmp_path: Path):
    formula = _first(name)
    for home in formula.homes:
        (tmp_path / home).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / home).write_text((REPO / home).read_text())
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    now = (REPO / path).read_text() + "\n\n" if (REPO / path).exists() else ""
    (tmp_path / path).write_text(now + code)  # the file as it is, the old copy put back
    found = _copies(formula, tmp_path)
    assert found and all(c.startswith(f"{path}:") for c in found), (name, path, found)


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
    (sgd_update, "def step(w_hat, x, y, eta, k_s, D):\n    gprime = np.sqrt(2 / np.pi) * np.exp(-lh ** 2 / 2)\n"
                 "    return w_hat + eta * delta / np.sqrt(k_s * D) * gprime[:, None, None] * xg\n"),
    (sgd_update, "def coef(self, lam, lh, xi, eta, sigma):\n"
                 "    return (eta / math.sqrt(self.k_s * self.D)) * delta[:, None] * self.gp(lh)\n"),
    (sgd_update, "def err(g, lam, lh, sigma, xi):\n"
                 "    return sum(g(v) for v in lam) + sigma * xi - sum(g(v) for v in lh)\n"),
    (kappa4, "def k4(b):\n    return -2.0 * b * b / (1.0 + b) ** 2\n"),
    (kappa4, "def k4(beta_v):\n    return -2 * (beta_v / (1 + beta_v)) ** 2\n"),
    (cross_term, "def c(bu, bv):\n    return np.sqrt(bu * bv / (1.0 + bv)) * np.sqrt(2.0 / np.pi)\n"),
    (cross_term, "def c(bu, bv):\n"
                 "    return math.sqrt(2 / math.pi) * math.sqrt(bu) * math.sqrt(bv) / math.sqrt(1 + bv)\n"),
    (marker_literal, "def leaks(text):\n"
                     "    return [m for m in ('### BEGIN SOLUTION', '### END SOLUTION') if m in text]\n"),
    (marker_literal, "PAT = re.compile(r'### BEGIN HIDDEN TESTS\\n(.*?)### END HIDDEN TESTS', re.S)\n"),
    (marker_literal, "def f(line, begin='BEGIN HIDDEN TESTS'):\n    return begin in line\n"),
    (hidden_lines_def, "class P:\n    def _hidden_lines(self, src):\n        return set()\n"),
    (hidden_lines_def, "hidden_lines = lambda src: set()\n"),
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
    text = ('def f(s):\n    """th = arccos(s); sqrt(1 - s**2)\n\n    ### BEGIN HIDDEN TESTS\n    """\n'
            "    # np.geomspace(1, 9, 3).astype(int)\n"
            "    # coef = eta / math.sqrt(k_s * D) * gp(lh); sigma * xi - g(lh).sum(-1)\n"
            "    # k4 = -2 * b**2 / (1 + b) ** 2; c = math.sqrt(2 / math.pi) * math.sqrt(u * v / (1 + v))\n"
            "    return s\n")
    assert not any(f.find(text) for f in FORMULAS)
