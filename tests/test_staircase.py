"""Tests of td_lib.staircase (demo 7.2.E trainer)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from td_lib import staircase
from td_lib.core.run import Run, checkpoints


def test_record_steps_are_the_notes_schedule():
    """Evaluation at sorted(set(int(geomspace(1, steps, num)))), without step 0."""
    for steps, num in ((12000, 40), (200, 40), (30, 6), (10, 3)):
        r = checkpoints(steps, num=num, zero=False).tolist()
        assert r == sorted(set(np.unique(np.geomspace(1, steps, num).astype(int)).tolist()))
        assert r[0] == 1 and r[-1] == steps and len(r) <= num


def test_logistic_grads_match_autograd():
    """The written-out gradients equal autograd's on the minibatch logistic loss (float64, to
    rounding), including units that are off for every sample of the batch."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 16, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (32,), generator=g).double() * 2 - 1
    W = torch.randn(64, 16, generator=g, dtype=torch.float64) / 4
    b = torch.randn(64, generator=g, dtype=torch.float64)
    b[:5] = -50.0  # dead units: zero gradient for their w_j and b_j
    a = torch.randn(64, generator=g, dtype=torch.float64) / 8
    params = [t.clone().requires_grad_() for t in (W, b, a)]
    loss = torch.nn.functional.softplus(-y * (torch.relu(x @ params[0].T + params[1]) @ params[2])).mean()
    auto = torch.autograd.grad(loss, params)
    mine = staircase.logistic_grads(x, y, W, b, a)
    for name, p, q in zip(("W", "b", "a"), mine, auto):
        # the written-out formulas and autograd reduce over the batch in different orders (torch's
        # BLAS kernels, chosen per CPU): equal to a few ulps of the largest gradient, not bit-equal
        assert p.shape == q.shape and (p - q).abs().max().item() <= 1e-14 * q.abs().max().item(), name
    assert mine[0][:5].abs().max().item() == 0.0 and mine[1][:5].abs().max().item() == 0.0


def test_first_above_and_onset_step():
    steps = [1, 2, 5, 10, 20, 50, 100]
    vals = [0.50, 0.52, 0.58, 0.51, 0.57, 0.80, 0.95]  # a transient at step 5, lasting rise from 20
    assert staircase.first_above(steps, vals, 0.9) == 100
    assert staircase.first_above(steps, vals, 0.99) is None
    assert staircase.onset_step(steps, vals, 0.05) == 20
    assert staircase.onset_step(steps, vals, 0.2) == 50
    assert staircase.onset_step(steps, vals[:-1] + [0.5], 0.05) is None  # falls back at the end
    with pytest.raises(ValueError, match="equal length"):
        staircase.onset_step(steps, vals[:-1])
    with pytest.raises(ValueError, match="rise"):
        staircase.onset_step(steps, vals, -0.1)


def test_short_run_shapes_and_ranges():
    out = staircase.train_staircase(False, d=8, width=8, steps=30, batch=8, n_test=500,
                                    num_records=6, progress="test")
    n = len(out.t)
    assert isinstance(out, Run) and np.array_equal(out.t, checkpoints(30, num=6, zero=False))
    assert out.accuracy.shape == (n, len(staircase.TEST_SETS))
    assert np.all((0.0 <= out.accuracy) & (out.accuracy <= 1.0))
    for i, name in enumerate(staircase.TEST_SETS):
        assert np.array_equal(out.accuracy_on(name), out.accuracy[:, i])
    with pytest.raises(ValueError, match="test_set"):
        out.accuracy_on("clone")
    for ov in (out.overlap_v, out.overlap_u, out.overlap_m):
        assert ov.shape == (n,) and np.all((0.0 <= ov) & (ov <= 1.0 + 1e-6))


def test_seeded_runs_are_reproducible():
    kw = dict(d=8, width=8, steps=20, batch=8, n_test=300, num_records=4, progress="test")
    a = staircase.train_staircase(True, **kw)
    b = staircase.train_staircase(True, **kw)
    assert np.array_equal(a.accuracy, b.accuracy) and np.array_equal(a.overlap_v, b.overlap_v)


def test_learns_the_mean_direction_quickly():
    """Within 200 steps the network beats chance clearly on full data (the mean stage alone
    gives 0.69; 10^4 test points, standard error 0.005) and the clone accuracy is close to
    full-data accuracy (nothing beyond two moments learned yet at this stage)."""
    out = staircase.train_staircase(False, steps=200, n_test=10000, num_records=5, progress="test")
    full, clone = out.accuracy_on("full data")[-1], out.accuracy_on("Gaussian clone")[-1]
    assert full > 0.66
    assert abs(full - clone) < 0.05


def test_bad_arguments():
    with pytest.raises(TypeError, match="correlated"):
        staircase.train_staircase(1, steps=5)
    with pytest.raises(ValueError, match="eta"):
        staircase.train_staircase(False, steps=5, eta=-1.0)


@pytest.mark.slow
def test_full_demo_shows_the_staircase():
    """The page's claims on demo 7.2.E: with independent latents the largest overlap with v
    ends near 1 and full-data accuracy exceeds the clone's at the end; with correlated latents
    the overlap with v exceeds 0.9 earlier than with independent ones."""
    torch.set_num_threads(1)
    ind = staircase.train_staircase(False)
    cor = staircase.train_staircase(True)
    assert ind.overlap_v[-1] > 0.9 and cor.overlap_v[-1] > 0.9
    assert ind.accuracy_on("full data")[-1] > ind.accuracy_on("Gaussian clone")[-1] + 0.03
    first = lambda r: next(t for t, o in zip(r.t, r.overlap_v) if o > 0.9)
    assert first(cor) < first(ind)


def test_seed_stream_matches_the_global_seed_convention_and_leaves_global_state_alone():
    """An int rng initialises the weights from the stream torch.manual_seed(rng) gave; the
    global generator is not touched."""
    torch.manual_seed(123)
    before = torch.get_rng_state()
    kw = dict(d=8, width=8, steps=3, batch=8, n_test=100, num_records=3)
    a = staircase.train_staircase(False, rng=4, **kw)
    assert torch.equal(torch.get_rng_state(), before)
    b = staircase.train_staircase(False, rng=4, **kw)
    assert np.array_equal(a.overlap_v, b.overlap_v) and np.array_equal(a.accuracy, b.accuracy)
