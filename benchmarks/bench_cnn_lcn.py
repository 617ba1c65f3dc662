"""Timings of the CNN/LCN theory engine (``td_lib.cnn_lcn``).

1. RHS evaluations per second (eqs 17-18) at (P, k_s, k_t) = (4, 3, 2), (6, 3, 1), (8, 2, 2):
   the vectorised RHS (one state, and per state inside a batch of 256) against the plain
   loop oracle ``checks.grading.cnn_lcn_odes.reference_rhs``.
2. The Figure 6 phase diagram (P=4, k_s=k_t=1, T=1, sigma=1, leading-order init): a coarse
   version by default, the paper's resolution (c = 0, 0.025, ..., 0.975; 41 learning rates;
   25 horizons alpha_F = 1e-2..1e4) with ``--full``.
3. alpha_spec (eq. 25) from random initial conditions at D = 1e4 ... 1e12 (Figure 3 setting).
4. The LCN RHS batched over 64 parameter sets at (P, k_s, k_t) = (8, 2, 2) with states that are
   not translation-symmetric (random inits at D = 100, 64 correlations and learning rates):
   CPU time per set of the batched call over that of 64 single calls (below 1 = batching
   pays), next to the same ratio for the CNN. (Issue 13: with the entry-wise I4 sum the LCN
   ratio was about 0.74 on the course machine; the blocked matrix form of ``odes.v_matrix``
   brings it to about 0.28.) The RHS is timed as ``rhs(..., validate=False)``, the call the
   integrator makes.
5. ``fixed_point`` (the noise floors of Figure 5) solved directly from the zero-error state
   (``warmup="auto"``) against the RK4 warm-up of eta alpha = 50 first (``warmup="always"``):
   CPU seconds of each and the largest relative difference of eps_g (the warm-up took ~2 s per
   state, the direct solve 0.01-0.35 s; the states agree to ~1e-12).

Usage: ``python benchmarks/bench_cnn_lcn.py [--full | --quick]`` (``--quick``: only sections 1
and 4, with short timing windows, a smoke test). Times are CPU seconds of this process
(``time.process_time``) and wall-clock seconds; the machine may be shared.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from checks.grading.cnn_lcn_odes import reference_rhs
from td_lib import cnn_lcn as cl


def _rhs(kind, R, Q, S, T, eta, sigma):
    """The unchecked RHS (what ``integrate`` evaluates in its inner loop)."""
    return cl.rhs(kind, R, Q, S, T=T, eta=eta, sigma=sigma, validate=False)


def _oracle(kind, R, Q, S, T, eta, sigma):
    return reference_rhs(kind, R, Q, S, T=T, eta=eta, sigma=sigma)


def _timeit(fn, *args, min_time=1.0):
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        fn(*args)
        n += 1
        if time.process_time() - c0 > min_time:
            break
    return (time.process_time() - c0) / n, (time.perf_counter() - t0) / n


def bench_rhs(min_time: float = 0.5) -> None:
    print("== RHS evaluations per second (per state; CPU time) ==")
    print(f"{'kind':4} {'(P,k_s,k_t)':12} {'oracle/s':>10} {'single/s':>10} {'batch256/s':>11} "
          f"{'x single':>9} {'x batch':>9}")
    for P, k_s, k_t in ((4, 3, 2), (6, 3, 1), (8, 2, 2)):
        S = cl.input_covariance(P, 0.3)
        for kind in ("cnn", "lcn"):
            R, Q = cl.random_init(kind, D=100, P=P, k_s=k_s, k_t=k_t, rng=0)
            t_or, _ = _timeit(_oracle, kind, R, Q, S, 1.0, 0.5, 0.5, min_time=min_time)
            one = (np.ones(()), np.full((), 0.5), np.full((), 0.5))
            t_1, _ = _timeit(_rhs, kind, R, Q, S, *one, min_time=min_time)
            Rb, Qb = cl.random_init(kind, D=100, P=P, k_s=k_s, k_t=k_t, n=256, rng=1)
            Sb = np.broadcast_to(S, (256, P, P))
            ones = (np.ones(256), np.full(256, 0.5), np.full(256, 0.5))
            t_b, _ = _timeit(_rhs, kind, Rb, Qb, Sb, *ones, min_time=min_time)
            t_b /= 256
            print(f"{kind:4} {str((P, k_s, k_t)):12} {1 / t_or:10.3g} {1 / t_1:10.3g} "
                  f"{1 / t_b:11.3g} {t_or / t_1:9.0f} {t_or / t_b:9.0f}")


def bench_phase_diagram(full: bool) -> None:
    print(f"\n== Figure 6 phase diagram ({'full' if full else 'coarse'}) ==")
    if full:
        kw = dict(cs=np.arange(0, 0.976, 0.025), alpha_F=np.geomspace(1e-2, 1e4, 25),
                  etas=np.geomspace(1e-4, 3.0, 41))
    else:
        kw = dict(cs=np.arange(0, 0.976, 0.125), alpha_F=np.geomspace(1e-2, 1e4, 13),
                  etas=np.geomspace(1e-4, 3.0, 19))
    c0, w0 = time.process_time(), time.perf_counter()
    out = cl.phase_diagram(P=4, k_s=1, k_t=1, T=1.0, sigma=1.0, progress=True, **kw)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    n_c, n_e, n_f = len(kw["cs"]), len(kw["etas"]), len(kw["alpha_F"])
    print(f"grid: {n_c} c x {n_e} eta x {n_f} alpha_F, both students: CPU {cpu:.1f} s, "
          f"wall {wall:.1f} s (RK4 steps: CNN {out['n_steps_cnn']}, LCN {out['n_steps_lcn']})")
    clipped = int(out["clipped_cnn"].sum() + out["clipped_lcn"].sum())
    print(f"entries whose optimum touches the eta grid edge or the tau_max cut: {clipped}")
    np.set_printoptions(precision=2, linewidth=160, suppress=True)
    print("log10(eps*_CNN / eps*_LCN), rows c, columns alpha_F =",
          np.array2string(kw["alpha_F"], precision=2))
    print(out["log10_ratio"])
    c0_slope = cl.c_star_slope(P=4, k_s=1, T=1.0, sigma=1.0)
    i = np.argmin(np.abs(kw["alpha_F"] - 1.0))
    col = out["log10_ratio"][:, i]
    sign = np.flatnonzero(np.diff(np.sign(col)) != 0)
    if sign.size:
        j = sign[0]
        cb = kw["cs"][j] - col[j] * (kw["cs"][j + 1] - kw["cs"][j]) / (col[j + 1] - col[j])
        print(f"boundary at alpha_F = {kw['alpha_F'][i]:.3g}: c* = {cb:.3f}; early-time "
              f"prediction c0 alpha_F = {c0_slope * kw['alpha_F'][i]:.3f} (eq. 119, c0 = "
              f"{c0_slope:.4f})")


def bench_alpha_spec(full: bool) -> None:
    print("\n== alpha_spec (eq. 25) from random inits, P=6, k_t=1, eta=0.5 (Figure 3) ==")
    Ds = np.array([1e4, 1e6, 1e8, 1e10, 1e12])
    for k_s in (1, 2, 3):
        c0, w0 = time.process_time(), time.perf_counter()
        a = cl.specialisation_time(Ds, P=6, k_s=k_s, k_t=1, eta=0.5, n_init=8 if full else 4,
                                   rng=k_s)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        m = np.mean(a, axis=1)
        b = np.polyfit(np.log(Ds), m, 1)[0]
        print(f"k_s={k_s}: mean alpha_spec = {np.array2string(m, precision=2)} for D = "
              f"1e4..1e12; slope d alpha_spec / d ln D = {b:.3f}; CPU {cpu:.1f} s, wall {wall:.1f} s")


def _cpu(fn, reps: int) -> float:
    fn()
    c0 = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - c0) / reps


def bench_batched_rhs(n: int = 64, reps: int = 10) -> None:
    print(f"\n== RHS batched over {n} parameter sets vs {n} single calls, (P, k_s, k_t) = (8, 2, 2), "
          "states not translation-symmetric (CPU time per set) ==")
    P, k_s, k_t = 8, 2, 2
    S = cl.input_covariance(P, np.linspace(0.0, 0.9, n))
    eta, sigma, T = np.geomspace(0.05, 2.0, n), np.full(n, 0.5), np.ones(n)
    for kind in ("lcn", "cnn"):
        R, Q = cl.random_init(kind, D=100, P=P, k_s=k_s, k_t=k_t, n=n, rng=1)
        t_b = _cpu(lambda k=kind, R=R, Q=Q: _rhs(k, R, Q, S, T, eta, sigma), reps) / n
        t_1 = _cpu(lambda k=kind, R=R, Q=Q: [_rhs(k, R[i], Q[i], S[i], T[i], eta[i], sigma[i])
                                             for i in range(n)], max(1, reps // 5)) / n
        print(f"{kind}: single call {1e3 * t_1:.3f} ms/set, batched {1e3 * t_b:.3f} ms/set, "
              f"ratio batched/single = {t_b / t_1:.3f}")


def bench_fixed_point() -> None:
    print("\n== fixed_point from the zero-error state: direct solve vs RK4 warm-up first "
          "(Figure 5: k_s = k_t = 2, eta = 2e-3, sigma = 1, T = 1) ==")
    tot = {"auto": 0.0, "always": 0.0}
    worst = 0.0
    for kind in ("cnn", "lcn"):
        for P, c in ((6, 0.0), (6, 0.5), (6, 0.75), (2, 0.5), (4, 0.5)):
            R0, Q0 = cl.zero_error_solution(kind, P=P, k_s=2, k_t=2)
            S = cl.input_covariance(P, c)
            res, line = {}, []
            for mode in ("always", "auto"):
                c0 = time.process_time()
                res[mode] = cl.fixed_point(kind, R0, Q0, S, T=1.0, eta=2e-3, sigma=1.0, warmup=mode)
                dt = time.process_time() - c0
                tot[mode] += dt
                line.append(f"{mode} {dt:6.3f} s")
            rel = abs(res["auto"]["eg"] / res["always"]["eg"] - 1)
            worst = max(worst, rel)
            print(f"{kind} P={P} c={c:4}: " + ", ".join(line) + f"; direct: {res['auto']['direct']}, "
                  f"|eg_auto / eg_always - 1| = {rel:.1e}")
    print(f"total: warm-up first {tot['always']:.2f} s, direct {tot['auto']:.2f} s "
          f"(x{tot['always'] / tot['auto']:.0f}); largest relative difference {worst:.1e}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--full", action="store_true", help="paper-resolution phase diagram")
    g.add_argument("--quick", action="store_true", help="smoke test: RHS timings only, short windows")
    args = p.parse_args(argv)
    if args.quick:
        bench_rhs(min_time=0.05)
        bench_batched_rhs(reps=1)
        return
    bench_rhs()
    bench_phase_diagram(args.full)
    bench_alpha_spec(args.full)
    bench_batched_rhs()
    bench_fixed_point()


if __name__ == "__main__":
    main()
