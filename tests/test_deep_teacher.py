"""Unit tests of td_lib.deep_teacher (§7.4 Demo 7.4.4, Tian 2020 Fig. 8)."""

from __future__ import annotations

import numpy as np
import pytest

from td_lib import deep_teacher as dt
from td_lib import teacher_student as ts
from td_lib.core.run import Run
from td_lib.teacher_student import demos


def _small(runs=2, seed=0):
    return dt.make_deep_teacher(d=8, widths=(4, 5, 6), C=3, runs=runs, rng=seed)


def test_teacher_nodes_active_on_the_calibrated_fraction():
    """Every hidden teacher node is active on its drawn fraction (in [0.4, 0.6]) of fresh
    inputs, with unit pre-activation spread: binomial error on 40000 inputs is 0.0025, the
    calibration sample's own error about 0.0035, so 0.02 is > 4 standard errors."""
    t = dt.make_deep_teacher(d=10, widths=(6, 8, 9), C=4, runs=3, rng=5)
    X = np.random.default_rng(99).standard_normal((40_000, 10))
    F = X
    for layer, (W, b) in enumerate(zip(t.W[:-1], t.b[:-1])):
        H = F @ W + b[:, None, :]
        frac = (H > 0).mean(axis=1)
        target = t.info["active_fraction"][layer]
        assert np.all((target >= 0.4) & (target <= 0.6))
        assert np.abs(frac - target).max() < 0.02, (layer, frac, target)
        np.testing.assert_allclose(H.std(axis=1), 1.0, atol=0.03)
        F = np.maximum(H, 0.0)
    assert t.widths == (6, 8, 9) and t.C == 4 and t.d == 10 and t.runs == 3


def test_student_shapes_and_a_copy_of_the_teacher_has_correlation_one():
    t = _small()
    s = dt.make_deep_student(t, factor=3, rng=2)
    assert s.widths == (12, 15, 18) and s.C == t.C and s.runs == t.runs
    X = np.random.default_rng(1).standard_normal((500, 8))
    out = dt.forward(s, X)
    assert out.shape == (2, 500, 3)
    acts = dt.hidden_layers(s, X)
    assert [a.shape for a in acts] == [(2, 500, 12), (2, 500, 15), (2, 500, 18)]
    # a student equal to the teacher matches every node of every layer exactly
    corr = dt.layer_correlations(t, t, X)
    for c in corr:
        np.testing.assert_allclose(c.max(axis=-1), 1.0, atol=1e-12)
    # and a random student does not
    corr = dt.layer_correlations(t, s, X)
    assert all(c.max(axis=-1).mean() < 0.95 for c in corr)


def _forward_from(net, layer, A, X_rows):
    """Output when the activations of hidden layer ``layer`` (0-based) are replaced by A."""
    F = A
    for W, b in zip(net.W[layer + 1:-1], net.b[layer + 1:-1]):
        F = np.maximum(F @ W + b[:, None, :], 0.0)
    return F @ net.W[-1] + net.b[-1][:, None, :]


def test_fanout_rms_is_the_rms_output_gradient():
    """sqrt(E β_kk): top layer = ‖v_k‖ exactly; lower layers = finite differences of the
    output with respect to each node's activation (ReLU nets are piecewise linear, so a tiny
    step is exact unless it crosses a kink, which a 1e-7 step almost never does)."""
    t = _small(runs=1, seed=3)
    s = dt.make_deep_student(t, factor=2, rng=4, v_scale=1.0)
    X = np.random.default_rng(2).standard_normal((60, 8))
    fr = dt.fanout_rms(s, X)
    np.testing.assert_allclose(fr[-1][0], np.linalg.norm(s.W[-1][0], axis=1), rtol=1e-12)
    acts = dt.hidden_layers(s, X)
    h = 1e-7
    for layer in range(len(acts) - 1):
        A = acts[layer]
        base = _forward_from(s, layer, A, X)
        est = []
        for k in range(A.shape[-1]):
            Ap = A.copy()
            Ap[..., k] += h
            g = (_forward_from(s, layer, Ap, X) - base) / h  # (1, N, C)
            est.append(np.sqrt(np.mean(np.sum(g * g, axis=-1), axis=-1)))
        np.testing.assert_allclose(fr[layer][0], np.array(est)[:, 0], rtol=1e-5, atol=1e-9)


def test_sgd_step_matches_autograd():
    import torch

    t = _small(runs=2, seed=7)
    s = dt.make_deep_student(t, factor=2, rng=8)
    rng = np.random.default_rng(3)
    X = torch.tensor(rng.standard_normal((2, 5, 8)))
    Y = torch.tensor(rng.standard_normal((2, 5, 3)))
    W = [torch.tensor(w).clone() for w in s.W]
    b = [torch.tensor(b_)[:, None, :].clone() for b_ in s.b]
    Wg = [w.clone().requires_grad_(True) for w in W]
    bg = [b_.clone().requires_grad_(True) for b_ in b]
    A = X
    for i in range(len(Wg) - 1):
        A = torch.relu(A @ Wg[i] + bg[i])
    loss = 0.5 * ((Y - (A @ Wg[-1] + bg[-1])) ** 2).sum(-1).mean(-1).sum()
    loss.backward()
    eta = 0.03
    dt.deep_sgd_step(W, b, X, Y, eta=eta)
    for i in range(len(W)):
        np.testing.assert_allclose(W[i].numpy(), (Wg[i] - eta * Wg[i].grad).detach().numpy(),
                                   atol=1e-13)
        np.testing.assert_allclose(b[i].numpy(), (bg[i] - eta * bg[i].grad).detach().numpy(),
                                   atol=1e-13)


def test_training_specialises_the_lowest_layer_and_records_what_it_says():
    t = dt.make_deep_teacher(d=8, widths=(4, 6), C=4, runs=2, rng=11)
    s = dt.make_deep_student(t, factor=3, rng=12)
    h = dt.train_deep(t, s, epochs=6, eta=0.05, batch=16, epoch_size=2000, evals_per_epoch=2,
                      snapshot_epochs=(1.0, 6.0), n_eval=800, rng=13)
    assert h.t[0] == 0 and h.t[-1] == pytest.approx(6.0)
    assert isinstance(h, Run) and dt.DeepHistory.time_label == "epochs"
    # half an epoch of 125 steps is 62 or 63 steps (rounded half to even), as before the Run record
    np.testing.assert_array_equal(h.t[:5] * 125, [0, 62, 125, 188, 250])
    assert h.rho_mean.shape == (h.t.size, 2, 2)
    assert [b.shape for b in h.best_corr] == [(h.t.size, 2, 4), (h.t.size, 2, 6)]
    assert np.all(h.loss[-1] < 0.5 * h.loss[0])
    assert np.all(h.rho_mean[-1, :, 0] > h.rho_mean[0, :, 0] + 0.2)
    # the recorded measure is layer_correlations of the final student on the same set
    Xe = h.X_eval
    assert Xe.shape == (800, 8)
    assert sorted(h.snapshots) == [1.0, 6.0]
    snap = h.snapshots[6.0]
    assert snap["epoch"] == pytest.approx(6.0)
    assert [f.shape for f in snap["fanout"]] == [(2, 12), (2, 18)]
    corr = dt.layer_correlations(t, h.student, Xe)
    for layer in range(2):
        np.testing.assert_allclose(h.best_corr[layer][-1], corr[layer].max(axis=-1), atol=1e-10)
        np.testing.assert_allclose(snap["node_corr"][layer], corr[layer].max(axis=-2), atol=1e-10)


def test_crossing_epochs_and_summary():
    e = np.array([0.0, 0.5, 1.0, 1.5])
    r = np.array([[0.1, 0.2], [0.6, 0.3], [0.8, 0.5], [0.95, 0.71]])
    np.testing.assert_array_equal(dt.crossing_epochs(e, r, 0.7), [1.0, 1.5])
    np.testing.assert_array_equal(dt.crossing_epochs(e, r, 0.9), [1.5, np.inf])
    with pytest.raises(ValueError, match="rho_mean"):
        dt.crossing_epochs(e, r[:3], 0.5)
    with pytest.raises(ValueError, match="threshold"):
        dt.crossing_epochs(e, r, 1.5)


def test_quick_demo_and_summary_keys():
    teacher, h = demos.fig8_demo(quick=True)
    S = demos.fig8_summary(h)
    assert teacher.widths == demos.DEEP_DEMO["widths"]
    assert S["runs"] == demos.DEEP_DEMO["runs"]
    assert set(S["cross"]) == {0.7, 0.9} and S["final"].shape == (3, 4)
    assert list(S["frac_special"]) == [0.2]


def test_bad_input_named():
    with pytest.raises(ValueError, match="widths"):
        dt.make_deep_teacher(d=5, widths=(), C=2)
    with pytest.raises(ValueError, match="widths\\[1\\]"):
        dt.make_deep_teacher(d=5, widths=(3, 0), C=2)
    with pytest.raises(ValueError, match="active_range"):
        dt.make_deep_teacher(d=5, widths=(3,), C=2, active_range=(0.6, 0.5))
    t = _small()
    with pytest.raises(ValueError, match="factor"):
        dt.make_deep_student(t, factor=0)
    with pytest.raises(TypeError, match="teacher"):
        dt.make_deep_student(ts.make_teacher(d=5, m=3, C=2, p=1.0), factor=2)
    s = dt.make_deep_student(t, factor=2)
    with pytest.raises(ValueError, match="eta"):
        dt.train_deep(t, s, epochs=1, eta=-1.0)
    with pytest.raises(ValueError, match="epochs"):
        dt.train_deep(t, s, epochs=0, eta=0.1)
    with pytest.raises(ValueError, match="X"):
        dt.forward(t, np.ones((4, 7)))
    other = dt.make_deep_student(dt.make_deep_teacher(d=8, widths=(4, 5), C=3, runs=2), factor=2)
    with pytest.raises(ValueError, match="depth"):
        dt.layer_correlations(t, other, np.ones((4, 8)))
