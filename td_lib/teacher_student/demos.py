"""The §7.4 notebook's demo runs and the numbers it quotes from them (not library API).

Seeded batches of teacher–student runs for Demos 7.4.1–7.4.3 (:func:`node_order_demo`: which
teacher node is matched first, over polarities and widths; :func:`focus_demo`: focus
shifting) and Demo 7.4.4 (:func:`fig8_demo`: Tian's Fig. 8 at CPU scale, a deep teacher),
each with the summary the notebook prints and ``checks/teacher_nodes.py`` recomputes. They are
built from the public API of :mod:`td_lib.teacher_student` and :mod:`td_lib.deep_teacher`;
nothing else in td_lib imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from td_lib import deep_teacher as deep
from td_lib.core import validate as V
from td_lib.core.runtime import base_seed, label
from td_lib.teacher_student.metrics import coverage_counts, first_match_times, focus_shifts
from td_lib.teacher_student.model import Net, make_student, make_teacher
from td_lib.teacher_student.training import History, train

__all__ = ["Experiment", "run_experiment", "DEMO_SIZE", "node_order_demo", "node_order_summary",
           "focus_demo", "focus_summary", "DEEP_DEMO", "fig8_demo", "fig8_summary"]


@dataclass
class Experiment:
    """A batch of teacher–student runs and what :func:`run_experiment` recorded.

    ``p``, ``factor`` and ``index`` have one entry per run: the teacher polarity, the
    over-realisation factor and the teacher/student index. Runs with the same ``index``
    share the teacher's directions (weights, biases, fan-out directions; only the strengths
    ``j^{-p}`` differ with ``p``) and the student's initialisation (a ×1 student is the first
    ``m`` nodes of the ×5 student with the same index), so polarities and widths are
    compared on the same draws.
    """

    teacher: Net
    history: History
    p: np.ndarray
    factor: np.ndarray
    index: np.ndarray

    def select(self, *, p: float | None = None, factor: int | None = None) -> np.ndarray:
        """Indices of the runs with the given polarity and/or factor."""
        ok = np.ones(self.p.size, bool)
        if p is not None:
            ok &= np.isclose(self.p, p)
        if factor is not None:
            ok &= self.factor == factor
        return np.flatnonzero(ok)


def run_experiment(configs: Sequence[tuple[float, int, int]], *, d: int = 20, m: int = 10,
                   C: int = 10, steps: int = 12000, eta: float = 0.2, batch: int = 16,
                   n_train: int | None = None, eval_every: int = 100, n_eval: int = 2000,
                   rng=0, progress: bool | str = False) -> Experiment:
    """Build teachers and students for ``configs`` and train them all in one batch.

    Parameters
    ----------
    configs : sequence of (p, factor, index)
        One run per entry: polarity ``p`` (eq. 13), over-realisation ``factor``, and an
        index selecting the random draws (see :class:`Experiment`).
    d, m, C, steps, eta, batch, n_train, eval_every, n_eval
        As in :func:`~td_lib.teacher_student.make_teacher` and
        :func:`~td_lib.teacher_student.train`.
    rng : int or numpy Generator
        Master seed ``s``: teacher ``i`` uses ``s·1000 + i``, student ``i`` uses
        ``s·1000 + 500 + i``, the data stream ``s·1000 + 999``. A Generator gives one master
        seed by a draw ``rng.integers(2**31)``.
    progress : bool or str
        Progress bar of the training (``True``: labelled "SGD").

    Examples
    --------
    Two runs (polarity 0 and 1, a ×2 student) of a tiny problem, a few hundred steps:

    >>> ex = run_experiment([(0.0, 2, 0), (1.0, 2, 0)], d=6, m=3, C=3, steps=200,
    ...                     eval_every=100, n_eval=200)
    >>> ex.p.tolist(), ex.factor.tolist()
    ([0.0, 1.0], [2, 2])
    """
    if len(configs) == 0:
        raise ValueError("configs must list at least one (p, factor, index) run")
    for c in configs:
        if len(c) != 3:
            raise ValueError(f"configs entries must be (p, factor, index), got {c!r}")
    seed = base_seed(rng)
    ps = np.array([V.finite("p", c[0], nonnegative=True) for c in configs])
    fs = np.array([V.positive_int("factor", c[1]) for c in configs])
    ix = np.array([V.positive_int("index", c[2], minimum=0) for c in configs])
    nmax = int(fs.max()) * V.positive_int("m", m)
    Wt, Vt, Ws, Vs = [], [], [], []
    for p_, f_, i_ in zip(ps, fs, ix):
        t = make_teacher(d=d, m=m, C=C, p=p_, rng=seed * 1000 + int(i_))
        s = make_student(t, factor=int(fs.max()), rng=seed * 1000 + 500 + int(i_))
        alive = np.arange(nmax) < f_ * m
        Wt.append(t.W[0])
        Vt.append(t.V[0])
        Ws.append(s.W[0] * alive)
        Vs.append(s.V[0] * alive[:, None])
    teacher = Net(np.stack(Wt), np.stack(Vt), info={"p": ps})
    student = Net(np.stack(Ws), np.stack(Vs), info={"factor": fs})
    hist = train(teacher, student, steps=steps, eta=eta, batch=batch, n_train=n_train,
                 eval_every=eval_every, n_eval=n_eval, rng=seed * 1000 + 999,
                 progress=progress)
    return Experiment(teacher, hist, ps, fs, ix)


# ------------------------------------------------------------- the notebook's demo runs

#: Problem size of the §7.4 demos (the paper uses d = 100, C = 50, 10–20 teacher nodes).
DEMO_SIZE = dict(d=20, m=10, C=10, eta=0.2, batch=16, n_eval=1000)


def node_order_demo(quick: bool = False, progress: bool | str = False) -> Experiment:
    """The notebook's online-SGD batch: polarities ``p ∈ {0, 1, 2}`` and widths ×1, ×2, ×5.

    Full size: ``p = 1`` with 6 teacher/student draws at each of ×1, ×2, ×5 (the
    over-realisation comparison, same draws across widths) and ``p = 0, 2`` with 3 draws at
    ×5; 12000 online SGD steps, evaluated every 200 steps. ``quick`` shrinks it to a smoke
    test (one draw each, 400 steps). Seeded: the check script recomputes the quoted numbers.
    ``progress=True`` labels the bar "online SGD, 3 polarities x 3 widths".

    References
    ----------
    Tian (2020), §5.3 and Fig. 12 (strong teacher nodes first), Fig. 9 (over-realisation).
    """
    k1, k02, steps, every = (1, 1, 400, 100) if quick else (6, 3, 12000, 200)
    cfg = [(1.0, f, i) for f in (1, 2, 5) for i in range(k1)]
    cfg += [(p, 5, i) for p in (0.0, 2.0) for i in range(k02)]
    return run_experiment(cfg, steps=steps, eval_every=every, rng=0,
                          progress=label(progress, "online SGD, 3 polarities x 3 widths"),
                          **DEMO_SIZE)


def focus_demo(quick: bool = False, progress: bool | str = False) -> Experiment:
    """The notebook's focus-shifting batch: ``p = 1``, ×5, two draws, SGD on a finite
    training set of 5000 inputs (the paper's setting: a fixed training set, many epochs);
    8000 steps (``quick``: 400), evaluated every 100 steps; ``progress=True`` labels the bar
    "SGD on 5000 samples".

    References
    ----------
    Tian (2020), §5.3, Fig. 6(b) and Fig. 11 (focus shifting).
    """
    steps = 400 if quick else 8000
    return run_experiment([(1.0, 5, i) for i in range(2)], steps=steps, n_train=5000,
                          eval_every=100, rng=2, progress=label(progress, "SGD on 5000 samples"),
                          **DEMO_SIZE)


def node_order_summary(ex: Experiment, threshold: float = 0.95) -> dict:
    """Numbers the notebook quotes from :func:`node_order_demo`.

    Returns a dict with, per polarity ``p`` (×5 students): ``first[p]`` the first-match
    times (draws × teacher nodes), ``median_first[p]`` their median per teacher node
    (``inf`` when most draws never matched it), ``matched[p]`` the mean number of teacher
    nodes matched at the end, ``spearman[p]`` the rank correlation between teacher index and
    first-match time (never-matched counted as latest), ``slope[p]`` the log–log slope of
    median first-match time against ``1/‖v*_j‖`` over the nodes matched in most draws; and,
    for ``p = 1``: ``coverage[f]`` the mean number of matched teacher nodes at the end for
    width ×f, ``coverage_curve[f]`` its mean over time, ``thresholds[f]`` mean coverage
    counts at :data:`THRESHOLDS`, ``paired_wins`` / ``paired_losses`` the number of draws in
    which both the ×2 and the ×5 student match more / either matches fewer teacher nodes
    than the ×1 student at the end, and ``vnorm_special`` / ``vnorm_unspecial`` the median
    fan-out norm of ×5 student nodes whose best teacher correlation is ≥ 0.95 / < 0.5,
    ``wnorm_special`` / ``wnorm_unspecial`` the same for the first-layer norms ``‖w_k‖``, and
    ``wnorm_init`` / ``vnorm_init`` the median ``‖w_k‖`` and ``‖v_k‖`` of those nodes at step 0.
    """
    from scipy import stats

    h = ex.history
    bc = h.best_corr
    out: dict = {k: {} for k in ("first", "median_first", "matched", "spearman", "slope",
                                 "coverage", "coverage_curve", "thresholds")}
    m = bc.shape[-1]
    j = np.arange(1, m + 1)
    for p in sorted(set(ex.p.tolist())):
        sel = ex.select(p=p, factor=5)
        fm = first_match_times(h.t, bc[:, sel], threshold)
        out["first"][p] = fm
        out["median_first"][p] = np.median(fm, axis=0)
        out["matched"][p] = float(np.isfinite(fm).sum(axis=1).mean())
        late = np.where(np.isfinite(fm), fm, 2.0 * h.t[-1])
        # A rank correlation is undefined when every node matched at once (or none did).
        rho = (stats.spearmanr(np.tile(j, fm.shape[0]), late.ravel()).statistic
               if np.ptp(late) > 0 else float("nan"))
        out["spearman"][p] = float(rho) if np.isfinite(rho) else float("nan")
        med = out["median_first"][p]
        ok = np.isfinite(med)
        if p > 0 and ok.sum() >= 2:
            out["slope"][p] = float(np.polyfit(p * np.log(j[ok]), np.log(med[ok]), 1)[0])
    for f in sorted(set(ex.factor.tolist())):
        sel = ex.select(p=1.0, factor=f)
        if sel.size == 0:
            continue
        cov = (bc[:, sel] > threshold).sum(axis=-1)
        out["coverage"][f] = float(cov[-1].mean())
        out["coverage_curve"][f] = cov.mean(axis=1)
        out["thresholds"][f] = coverage_counts(bc[-1, sel]).mean(axis=0)
    widths = [ex.select(p=1.0, factor=f) for f in (1, 2, 5)]
    if all(w.size for w in widths) and len({w.size for w in widths}) == 1:
        c1, c2, c5 = ((bc[-1, w] > threshold).sum(axis=-1) for w in widths)
        out["paired_wins"] = int(((c2 > c1) & (c5 > c1)).sum())
        out["paired_losses"] = int(((c2 < c1) | (c5 < c1)).sum())
        out["paired_draws"] = int(c1.size)
    sel = ex.select(p=1.0, factor=5)
    spec = h.corr[-1, sel].max(axis=1)  # (runs, n): best teacher per student node
    vn = h.vnorm[-1, sel]
    out["vnorm_special"] = float(np.median(vn[spec >= 0.95])) if np.any(spec >= 0.95) else \
        float("nan")
    out["vnorm_unspecial"] = float(np.median(vn[spec < 0.5])) if np.any(spec < 0.5) else \
        float("nan")
    wn = h.wnorm[-1, sel]
    out["wnorm_special"] = float(np.median(wn[spec >= 0.95])) if np.any(spec >= 0.95) else \
        float("nan")
    out["wnorm_unspecial"] = float(np.median(wn[spec < 0.5])) if np.any(spec < 0.5) else \
        float("nan")
    out["wnorm_init"] = float(np.median(h.wnorm[0, sel]))
    out["vnorm_init"] = float(np.median(h.vnorm[0, sel]))
    out["n_unspecial"] = int((spec < 0.5).sum())
    out["n_nodes"] = int(spec.size)
    return out


def focus_summary(ex: Experiment) -> dict:
    """The clearest focus shift in :func:`focus_demo` (see :func:`focus_shifts`), with the
    step of its peak and the step at which its correlation with the new teacher first
    exceeds 0.95; empty if there is none."""
    ev = focus_shifts(ex.history.corr)
    if not ev:
        return {}
    e = dict(ev[0])
    steps = ex.history.t
    e["step_peak"] = int(steps[e["t_peak"]])
    c2 = ex.history.corr[:, e["run"], e["j2"], e["node"]]
    e["step_match"] = float(first_match_times(steps, c2[:, None], 0.95)[0])
    e["matched_end"] = (ex.history.best_corr[-1] > 0.95).sum(axis=-1)
    return e


# ------------------------------------------------------------ Demo 7.4.4: a deep teacher

#: Fig. 8 at CPU scale: the paper's shape (four hidden layers, widths growing 2:3:4:5,
#: d = 2 m_1, C = m_1) at a fifth of its width, a 5× over-realised student (the paper: 10×).
DEEP_DEMO = dict(d=20, widths=(10, 15, 20, 25), C=10, factor=5, runs=3, eta=0.05, batch=16,
                 epoch_size=10_000)


def fig8_demo(quick: bool = False,
              progress: bool | str = False) -> tuple[deep.DeepNet, deep.DeepHistory]:
    """The notebook's deep run: :data:`DEEP_DEMO`, 3 seeds (teachers and students) in one
    batch, 30 epochs of online SGD (``quick``: 0.2 epochs), evaluated every half epoch, with
    Fig. 8 snapshots at epochs 1, 3, 10 and 30. Seeded: the check script recomputes it.
    ``progress=True`` labels the bar "deep teacher, online SGD".

    References
    ----------
    Tian (2020), §6 and Fig. 8 ("the lowest layer learns first").
    """
    c = DEEP_DEMO
    ep = 0.2 if quick else 30.0
    snaps = (0.2,) if quick else (1.0, 3.0, 10.0, 30.0)
    teacher = deep.make_deep_teacher(d=c["d"], widths=c["widths"], C=c["C"], runs=c["runs"],
                                     rng=74)
    student = deep.make_deep_student(teacher, factor=c["factor"], rng=75)
    hist = deep.train_deep(teacher, student, epochs=ep, eta=c["eta"], batch=c["batch"],
                           epoch_size=c["epoch_size"], evals_per_epoch=2, snapshot_epochs=snaps,
                           rng=76, progress=label(progress, "deep teacher, online SGD"))
    return teacher, hist


def fig8_summary(hist: deep.DeepHistory, thresholds: Sequence[float] = (0.7, 0.9)) -> dict:
    """Numbers the notebook quotes from :func:`fig8_demo`.

    Returns ``cross[τ]`` (runs × layers: first epoch with ``ρ_mean ≥ τ``, ``inf`` if never),
    ``median_cross[τ]`` (per layer, median over runs), ``lowest_first[τ]`` (number of runs
    in which layer 1 reaches ``τ`` strictly before every other layer), ``final`` (runs ×
    layers: ``ρ_mean`` at the end), ``initial`` (the same at epoch 0) and, per snapshot epoch,
    ``frac_special[e]`` (layers: fraction of student nodes whose best correlation is ≥ 0.9).
    """
    out: dict = {"cross": {}, "median_cross": {}, "lowest_first": {}}
    for tau in thresholds:
        c = deep.crossing_epochs(hist.t, hist.rho_mean, tau)
        out["cross"][tau] = c
        out["median_cross"][tau] = np.median(c, axis=0)
        first = np.isfinite(c[:, 0]) & np.all(c[:, :1] < c[:, 1:], axis=1)
        out["lowest_first"][tau] = int(first.sum())
    out["final"] = hist.rho_mean[-1]
    out["initial"] = hist.rho_mean[0]
    out["frac_special"] = {e: np.array([float(np.mean(nc >= 0.9)) for nc in s["node_corr"]])
                           for e, s in hist.snapshots.items()}
    out["runs"] = int(hist.rho_mean.shape[1])
    return out
