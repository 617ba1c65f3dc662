"""The numeric configuration a test run computes in: BLAS libraries, their kernels and threads.

``describe()`` is the one-line header pytest prints (tests/conftest.py). Run as a script,
``python tests/numerics_support.py --threads N`` checks that every BLAS/OpenMP pool that
threadpoolctl sees and torch's intra-op pool run ``N`` threads, and fails loudly otherwise:
``make test-numerics`` (the second numeric configuration, one thread) starts with it, so that
target never silently reruns the default configuration (e.g. where a library ignores
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS).
"""

from __future__ import annotations

import argparse
import os
import sys


def _load() -> tuple[list[dict], int | None]:
    """threadpoolctl's pools with numpy's, scipy's and torch's libraries loaded, and torch's
    intra-op thread count (None without torch)."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS)
    from threadpoolctl import threadpool_info

    try:
        import torch
    except ImportError:
        torch = None
    return threadpool_info(), (torch.get_num_threads() if torch is not None else None)


def _owner(pool: dict) -> str:
    """The package that ships a pool's library (numpy, scipy, torch), from its path."""
    parts = pool.get("filepath", "").replace(os.sep, "/").split("/")
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):
            return parts[i + 1].removesuffix(".libs")
    return os.path.basename(pool.get("filepath", "?"))


def describe() -> str:
    """``internal_api version architecture threads=N`` per pool, torch's threads and the
    OPENBLAS_CORETYPE in force, on one line."""
    try:
        pools, torch_threads = _load()
    except ImportError as exc:  # threadpoolctl missing: say so in the header, do not fail
        return f"numerics: unknown ({exc}; run `make setup`)"
    parts = []
    for p in sorted(pools, key=_owner):
        fields = (p.get("internal_api"), p.get("version"), p.get("architecture"))
        parts.append(" ".join(str(x) for x in fields if x)
                     + f" threads={p.get('num_threads')} ({_owner(p)})")
    core = os.environ.get("OPENBLAS_CORETYPE", "unset")
    return (f"numerics: {'; '.join(parts)}; torch threads={torch_threads}; "
            f"OPENBLAS_CORETYPE={core}")


def check(threads: int) -> list[str]:
    """What differs from ``threads`` threads everywhere (empty: the configuration holds)."""
    pools, torch_threads = _load()
    bad = [f"{p.get('internal_api')} {p.get('filepath')}: num_threads={p.get('num_threads')}"
           for p in pools if p.get("num_threads") != threads]
    if not any(p.get("user_api") == "blas" for p in pools):
        bad.append("threadpoolctl sees no BLAS library (numpy/scipy OpenBLAS not loaded?)")
    if torch_threads is not None and torch_threads != threads:
        bad.append(f"torch.get_num_threads() = {torch_threads}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, required=True, help="the thread count every pool must have")
    args = ap.parse_args(argv)
    print(describe())
    bad = check(args.threads)
    if bad:
        print(f"ERROR: the numeric configuration did not take effect (expected {args.threads} "
              "thread(s) everywhere):\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    core = os.environ.get("OPENBLAS_CORETYPE")
    if core:
        archs = {p.get("architecture") for p in _load()[0] if p.get("internal_api") == "openblas"}
        if {str(a).lower() for a in archs} != {core.lower()}:
            print(f"note: OPENBLAS_CORETYPE={core} runs OpenBLAS's {', '.join(sorted(map(str, archs)))} "
                  "kernel on this machine (an alias or this build's fallback)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
