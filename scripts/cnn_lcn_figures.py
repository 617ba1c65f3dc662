"""Full-resolution figures of the CNN vs LCN notebooks (assignment ``cnn_lcn``, ``course/source/cnn_lcn/``).

The notebooks draw every figure of the paper at sizes that fit its time budget; this script
redraws the heavy ones at the paper's resolution into ``build/figures/``:

* Figure 1 -- the teacher / CNN / LCN schematic (``td_lib.cnn_lcn.plots.architecture_schematic``);
* Figure 3 -- alpha_spec vs D (10^2 .. 10^12, 11 dimensions) for k_s = 1..4, the mean and
  standard error over random initial conditions per D, with the a + b ln D fits through the
  means at D >= 10^4 (``cl.log_d_fit``, as the notebook and its check fit them);
* Figure 7 -- the same for (a) a teacher with k_t = 2 and students k_s = 2, 3, 4 and (b) k_t = 1
  at c = 0.5, k_s = 1, 2, 3 (the check's ``FIG7`` settings, more initialisations);
* Figure 6 -- the phase diagram on the paper's grid (c = 0, 0.025, ..., 0.975; alpha_F =
  10^-2 .. 10^4), with the c0 alpha_F line;
* Figure 8 -- optimal learning rate and error vs alpha_F from the same data;
* Figure 9 -- the four one-parameter variants of Figure 6.

Usage::

    python scripts/cnn_lcn_figures.py [--only fig1,fig3,fig7,fig6,fig9] [--coarse] [--out build/figures]

``--coarse`` runs every figure on small grids (a smoke test, about a minute). Each figure is
also saved as ``.npz`` (the data behind the plot). Everything is computed by
:mod:`td_lib.cnn_lcn`; nothing is loaded from elsewhere.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from checks import cnn_lcn_notebook_check as nbcheck  # noqa: E402
from td_lib import cnn_lcn as cl  # noqa: E402
from td_lib.cnn_lcn.plots import architecture_schematic, phase_plot  # noqa: E402
from td_lib.core.runtime import progress  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def figure1(out: Path, coarse: bool) -> None:
    """Figure 1: teacher, CNN and LCN on P = 4 periodic positions (k_t = 2, k_s = 3)."""
    fig = architecture_schematic(P=4, k_s=3, k_t=2)
    fig.savefig(out / "cnn_lcn_fig1.png", dpi=150)
    plt.close(fig)


def _alpha_spec_panel(ax, Ds, runs: dict, title: str, n_init: int) -> dict:
    """Means +- standard errors of alpha_spec per D and the a + b ln D fits (D >= 1e4)."""
    data = {}
    for k_s, a in runs.items():
        data[f"alpha_spec_ks{k_s}"] = a
        finite = np.isfinite(a).all(1)
        mean = np.where(finite, np.nanmean(np.where(np.isfinite(a), a, np.nan), 1), np.nan)
        se = a.std(1, ddof=1) / np.sqrt(n_init) if n_init > 1 else None
        ax.errorbar(Ds[finite], mean[finite], None if se is None else se[finite], fmt="o", ms=4,
                    color=f"C{k_s}", label=f"$k_s={k_s}$ (mean of {n_init})")
        use = finite & (Ds >= nbcheck.D_MIN)
        if use.sum() >= 2:
            f = cl.log_d_fit(Ds[use], a[use], nbcheck.D_MIN)
            ax.plot(Ds, f["a"] + f["b"] * np.log(Ds), "--", color=f"C{k_s}", lw=1,
                    label=f"${f['a']:.1f}+({f['b']:.2f}\\pm{f['se_b']:.2f})\\ln D$")
    ax.set(xscale="log", xlabel="feature dimension $D$", ylabel=r"$\alpha_{\rm spec}$ ($\gamma_{\rm th}=0.99$)",
           title=title)
    ax.legend(fontsize=7, ncol=2)
    return data


def _alpha_spec(r: cl.SpecialisationRun) -> np.ndarray:
    """Eq. 25 on the trajectories of a specialisation run: ``(n_D, n_init)``."""
    return cl.alpha_spec(r.t, r.gamma, 0.99)


def figure3(out: Path, coarse: bool) -> None:
    """alpha_spec (eq. 25) vs D; erf, k_t = 1, P = 6, S = I, eta = 0.5, T = 1, sigma = 0."""
    Ds = np.geomspace(1e2, 1e12, 3 if coarse else 11)
    n_init = 2 if coarse else 16
    ks_list = (1, 2) if coarse else (1, 2, 3, 4)
    runs = {k_s: _alpha_spec(cl.specialisation_runs(Ds, k_s=k_s, n_init=n_init, alpha_max=nbcheck.AMAX3[k_s],
                                                    **nbcheck.FIG3))
            for k_s in progress(ks_list, desc="Figure 3")}
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    data = _alpha_spec_panel(ax, Ds, runs, r"Figure 3: erf, $k_t=1$, $P=6$, $S=I$, $\eta=0.5$, $T=1$, "
                             r"$\sigma=0$", n_init)
    fig.tight_layout()
    fig.savefig(out / "cnn_lcn_fig3.png", dpi=150)
    plt.close(fig)
    np.savez(out / "cnn_lcn_fig3.npz", D=Ds, **data)


def figure7(out: Path, coarse: bool) -> None:
    """Figure 7: (a) k_t = 2, k_s = 2, 3, 4; (b) k_t = 1 at c = 0.5, k_s = 1, 2, 3."""
    Ds = np.geomspace(1e2, 1e12, 3 if coarse else 11)
    n_init = 2 if coarse else 16
    panels = {"a": (2, 3) if coarse else (2, 3, 4), "b": (1, 2) if coarse else (1, 2, 3)}
    titles = {"a": r"(a) $k_t=2$, $\eta=0.5$, $c=0$", "b": r"(b) $k_t=1$, $\eta=0.2$, $c=0.5$"}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    saved = {}
    for ax, (panel, ks) in zip(axes, panels.items()):
        runs = {k_s: _alpha_spec(cl.specialisation_runs(Ds, k_s=k_s, n_init=n_init,
                                                        alpha_max=nbcheck.AMAX7[panel, k_s], **nbcheck.FIG7[panel]))
                for k_s in progress(ks, desc=f"Figure 7{panel}")}
        saved |= {f"{panel}_{k}": v for k, v in _alpha_spec_panel(ax, Ds, runs, titles[panel], n_init).items()}
    fig.suptitle("Figure 7: specialisation time against $D$ (erf, $P=6$, $S=I$, $T=1$, $\\sigma=0$)")
    fig.tight_layout()
    fig.savefig(out / "cnn_lcn_fig7.png", dpi=150)
    plt.close(fig)
    np.savez(out / "cnn_lcn_fig7.npz", D=Ds, **saved)


def _phase_plot(ax, pd, c0, title):
    return phase_plot(ax, pd, c0, title, xlabel=r"$\alpha_F$", ylabel="$c$")


def _grids(coarse: bool):
    if coarse:
        return np.array([0.0, 0.5]), np.geomspace(1e-2, 1e1, 4), np.geomspace(1e-2, 2.0, 6)
    return (np.arange(0, 0.976, 0.025), np.geomspace(1e-2, 1e4, 25),
            np.geomspace(1e-4, 3.0, 41))


def figure6_8(out: Path, coarse: bool) -> None:
    """Figure 6 (phase diagram) and Figure 8 (eta*, eps* vs alpha_F); erf, P=4, k=1, T=1, sigma=1."""
    cs, aF, etas = _grids(coarse)
    pd = cl.phase_diagram(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, cs=cs, alpha_F=aF, etas=etas,
                          dtau=0.05, progress=True)
    c0 = cl.c_star_slope_numeric(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    m = _phase_plot(ax, pd, c0, r"Figure 6: erf, $P=4$, $k_s=k_t=1$, $T=1$, $\sigma=1$")
    fig.colorbar(m, ax=ax, label=r"$\log_{10}(\varepsilon^\ast_{\rm CNN}/\varepsilon^\ast_{\rm LCN})$")
    fig.tight_layout()
    fig.savefig(out / "cnn_lcn_fig6.png", dpi=150)
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    picks = sorted({0, len(cs) // 2, len(cs) - 1})
    for j, ci in enumerate(picks):
        for kind, ls in (("cnn", "-"), ("lcn", "--")):
            axes[0].loglog(aF, pd[f"eta_{kind}"][ci], ls, color=f"C{j}",
                           label=f"{kind.upper()}, c={cs[ci]:.3g}")
            axes[1].loglog(aF, pd[f"eps_{kind}"][ci], ls, color=f"C{j}",
                           label=f"{kind.upper()}, c={cs[ci]:.3g}")
    axes[0].set(xlabel=r"$\alpha_F$", ylabel=r"$\eta^\ast$", title="(a)")
    axes[1].set(xlabel=r"$\alpha_F$", ylabel=r"$\varepsilon^\ast$", title="(b)")
    for a_ in axes:
        a_.legend(fontsize=7)
    fig.suptitle("Figure 8: optimal learning rate and error (Figure 6 parameters)")
    fig.tight_layout()
    fig.savefig(out / "cnn_lcn_fig8.png", dpi=150)
    plt.close(fig)
    np.savez(out / "cnn_lcn_fig6.npz", c0=c0, **pd)


def figure9(out: Path, coarse: bool) -> None:
    """Figure 9: (a) P = 8, (b) k_s = k_t = 2, (c) T = 2, (d) sigma = 2."""
    cs, aF, etas = _grids(coarse)
    if not coarse:  # a little coarser than Figure 6: four diagrams, P = 8 among them
        cs, aF, etas = cs[::2], aF[::2], etas[::2]
    variants = [("(a) $P=8$", dict(P=8)), ("(b) $k_s=k_t=2$", dict(k_s=2, k_t=2)),
                ("(c) $T=2$", dict(T=2.0)), ("(d) $\\sigma=2$", dict(sigma=2.0))]
    fig, axes = plt.subplots(1, 4, figsize=(20, 4))
    saved = {}
    for ax, (title, kw) in zip(axes, progress(variants, desc="Figure 9")):
        par = dict(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0) | kw
        pd = cl.phase_diagram(**par, cs=cs, alpha_F=aF, etas=etas, dtau=0.05)
        c0 = cl.c_star_slope_numeric(**par)
        fig.colorbar(_phase_plot(ax, pd, c0, title), ax=ax)
        saved[title[:3]] = pd["log10_ratio"]
    fig.suptitle(r"Figure 9: $\log_{10}(\varepsilon^\ast_{\rm CNN}/\varepsilon^\ast_{\rm LCN})$, one "
                 r"parameter changed from Figure 6")
    fig.tight_layout()
    fig.savefig(out / "cnn_lcn_fig9.png", dpi=150)
    plt.close(fig)
    np.savez(out / "cnn_lcn_fig9.npz", cs=cs, alpha_F=aF,
             **{k.strip("()"): v for k, v in saved.items()})


FIGURES = {"fig1": figure1, "fig3": figure3, "fig7": figure7, "fig6": figure6_8, "fig9": figure9}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(FIGURES), help="comma-separated subset of "
                   + ", ".join(FIGURES))
    p.add_argument("--coarse", action="store_true", help="small grids (smoke test)")
    p.add_argument("--out", default=str(REPO / "build" / "figures"))
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    bad = [n for n in names if n not in FIGURES]
    if bad:
        p.error(f"unknown figure(s) {bad}; choose from {list(FIGURES)}")
    for name in names:
        t0 = time.time()
        FIGURES[name](out, args.coarse)
        print(f"{name}: {time.time() - t0:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
