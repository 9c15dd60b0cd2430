"""jtorch.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates (and cycled
momenta) of every scheduler over 30 steps, closed forms via ``step(epoch)``, state dicts,
torch's warnings and errors."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import jtorch
import jtorch.optim  # noqa: F401
import jtorch.optim.lr_scheduler  # noqa: F401


def _opt(lib, name="SGD", groups=2, **kw):
    ps = [lib.nn.Parameter(lib.ones(2)) for _ in range(groups)]
    kw = {"lr": 0.1, **kw}
    if name == "SGD":
        kw.setdefault("momentum", 0.9)
    return getattr(lib.optim, name)([{"params": [p], "lr": 0.1 * (i + 1)}
                                     for i, p in enumerate(ps)], **kw)


def _group_vals(opt):
    out = []
    for g in opt.param_groups:
        out.append((g["lr"], g.get("momentum"), g.get("betas", (None,))[0]))
    return out


SCHEDULERS = [
    ("StepLR", lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5)),
    ("MultiStepLR", lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, [3, 7, 7, 20], 0.3)),
    ("ExponentialLR", lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7)),
    ("CosineAnnealingLR-eta", lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=10, eta_min=0.01)),
    ("LambdaLR", lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1))),
    ("LambdaLR-list", lambda lib, o: lib.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 0.9 ** e, lambda e: 1 + e])),
    ("MultiplicativeLR", lambda lib, o: lib.optim.lr_scheduler.MultiplicativeLR(
        o, lambda e: 0.95)),
    ("LinearLR", lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, 0.25, 1.0, total_iters=8)),
    ("LinearLR-down", lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, 1.0, 0.1, 10)),
    ("ConstantLR", lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=0.5,
                                                                   total_iters=4)),
    ("PolynomialLR", lambda lib, o: lib.optim.lr_scheduler.PolynomialLR(o, total_iters=12,
                                                                       power=2.0)),
    ("CosineAnnealingWarmRestarts", lambda lib, o:
        lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts-1", lambda lib, o:
        lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=5)),
    ("OneCycleLR", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0,
                                                                    total_steps=31)),
    ("OneCycleLR-linear-3phase", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
        o, max_lr=[1.0, 2.0], epochs=4, steps_per_epoch=8, anneal_strategy="linear",
        three_phase=True, pct_start=0.25)),
    ("OneCycleLR-nomomentum", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.5, total_steps=40, cycle_momentum=False, div_factor=10.0)),
    ("CyclicLR", lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=4)),
    ("CyclicLR-tri2", lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, [0.01, 0.02], [0.1, 0.3], step_size_up=3, step_size_down=5, mode="triangular2")),
    ("CyclicLR-exp", lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    ("SequentialLR", lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o, 0.1, total_iters=5),
            lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10),
            lib.optim.lr_scheduler.ExponentialLR(o, 0.9)], milestones=[5, 15])),
    ("ChainedScheduler", lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ConstantLR(o, 0.5, total_iters=6),
         lib.optim.lr_scheduler.ExponentialLR(o, 0.9)])),
]


LR_CASES = [(name, make, "SGD") for name, make in SCHEDULERS] + [
    (name, make, "Adam") for name, make in SCHEDULERS if name.startswith(("OneCycle", "Cyclic"))]


@pytest.mark.parametrize("name,make,opt_name", LR_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in LR_CASES])
def test_lr_sequence_matches_torch(name, make, opt_name):
    """Adam cases check that cycled momentum goes into betas[0]."""
    seqs = []
    for lib in (jtorch, torch):
        opt = _opt(lib, opt_name)
        sched = make(lib, opt)
        seq = [(sched.get_last_lr(), _group_vals(opt))]
        for _ in range(30):
            opt.step()
            sched.step()
            seq.append((list(sched.get_last_lr()), _group_vals(opt)))
        seqs.append(seq)
    for (lj, gj), (lt, gt) in zip(*seqs):
        np.testing.assert_allclose(lj, lt, rtol=1e-12, atol=1e-15)
        for a, b in zip(gj, gt):
            for x, y in zip(a, b):
                assert (x is None) == (y is None)
                if x is not None:
                    assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"),
                                                 ("max", "abs")])
def test_reduce_lr_on_plateau_matches_torch(mode, threshold_mode):
    rng = np.random.default_rng(0)
    metrics = np.cumsum(rng.standard_normal(40)) * 0.1 + 1
    seqs = []
    for lib in (jtorch, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode, factor=0.5, patience=2, threshold=0.01,
            threshold_mode=threshold_mode, cooldown=1, min_lr=[0.0, 0.02], eps=1e-8)
        seq = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seq.append((list(sched.get_last_lr()), sched.num_bad_epochs, sched.best))
        seqs.append(seq)
    assert seqs[0] == seqs[1]


@pytest.mark.parametrize("name,make", [s for s in SCHEDULERS if s[0] in (
    "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR-eta", "LinearLR", "ConstantLR",
    "PolynomialLR", "CosineAnnealingWarmRestarts", "LambdaLR")], ids=lambda x: x
    if isinstance(x, str) else "")
def test_closed_form_with_epoch_matches_torch(name, make):
    seqs = []
    for lib in (jtorch, torch):
        opt = _opt(lib)
        sched = make(lib, opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in [3, 1, 7, 7, 12, 25, 5]:
                opt.step()
                sched.step(e)
                seq.append(list(sched.get_last_lr()))
        seqs.append(seq)
    np.testing.assert_allclose(seqs[0], seqs[1], rtol=1e-12)


@pytest.mark.parametrize("name,make", [s for s in SCHEDULERS if s[0] in (
    "StepLR", "CosineAnnealingLR", "OneCycleLR", "CyclicLR", "SequentialLR", "ChainedScheduler",
    "LinearLR", "CosineAnnealingWarmRestarts")], ids=lambda x: x if isinstance(x, str) else "")
def test_state_dict_round_trip(name, make):
    """Save mid-way, load into a fresh optimizer + scheduler, continue like the original."""
    opt = _opt(jtorch)
    sched = make(jtorch, opt)
    for _ in range(10):
        opt.step()
        sched.step()
    osd, ssd = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    assert "optimizer" not in ssd
    if name != "ChainedScheduler":
        assert ssd["last_epoch"] == 10
    rest = []
    for _ in range(10):
        opt.step()
        sched.step()
        rest.append(sched.get_last_lr())
    opt2 = _opt(jtorch)
    sched2 = make(jtorch, opt2)
    sched2.load_state_dict(ssd)
    opt2.load_state_dict(osd)
    rest2 = []
    for _ in range(10):
        opt2.step()
        sched2.step()
        rest2.append(sched2.get_last_lr())
    assert rest == rest2


def test_state_dict_keys_match_torch():
    for make in [lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 3),
                 lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, 5),
                 lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0)]:
        sj, st = make(jtorch, _opt(jtorch)).state_dict(), make(torch, _opt(torch)).state_dict()
        assert set(sj) == set(st)
        for k in st:
            if k not in ("lr_lambdas",):
                assert sj[k] == st[k], k


def test_initial_lr_and_last_epoch():
    opt = _opt(jtorch)
    sched = jtorch.optim.lr_scheduler.StepLR(opt, 2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    assert sched.last_epoch == 0 and sched.base_lrs == [0.1, 0.2]
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        jtorch.optim.lr_scheduler.StepLR(_opt(jtorch), 2, last_epoch=3)


def test_warns_when_stepped_before_optimizer():
    opt = _opt(jtorch)
    sched = jtorch.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before"):
        sched.step()
    opt = _opt(jtorch)
    sched = jtorch.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
        sched.step()


def test_warns_when_optimizer_step_overridden():
    opt = _opt(jtorch)
    sched = jtorch.optim.lr_scheduler.StepLR(opt, 2)
    opt.step = lambda: None
    with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
        sched.step()


def test_get_lr_outside_step_warns_and_epoch_deprecation():
    sched = jtorch.optim.lr_scheduler.ExponentialLR(_opt(jtorch), 0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
        sched.optimizer.step()
        sched.step(3)
    assert sched.get_last_lr() == pytest.approx([0.1 * 0.125, 0.2 * 0.125])


def test_one_cycle_steps_past_total_raise():
    for lib in (jtorch, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                             "total steps is 3"):
            sched.step()


def _err(fn_j, fn_t):
    with pytest.raises(Exception) as ej:
        fn_j()
    with pytest.raises(Exception) as et:
        fn_t()
    assert type(ej.value) is type(et.value) and str(ej.value) == str(et.value)


@pytest.mark.parametrize("case", ["notopt", "constant", "linear", "linear_end", "lambdas",
                                  "mult_callable", "plateau_factor", "plateau_mode",
                                  "plateau_tmode", "plateau_minlr", "warm_T0", "warm_Tmult",
                                  "onecycle_total", "onecycle_none", "onecycle_pct",
                                  "onecycle_anneal", "onecycle_momentum", "cyclic_mode",
                                  "seq_empty", "seq_milestones", "seq_plateau", "seq_other_opt",
                                  "chain_empty", "format_param"])
def test_errors_match_torch(case):
    def make(lib):
        S = lib.optim.lr_scheduler
        o = _opt(lib)
        return {
            "notopt": lambda: S.StepLR(object(), 2),
            "constant": lambda: S.ConstantLR(o, factor=2.0),
            "linear": lambda: S.LinearLR(o, start_factor=0.0),
            "linear_end": lambda: S.LinearLR(o, end_factor=1.5),
            "lambdas": lambda: S.LambdaLR(o, [lambda e: 1.0]),
            "mult_callable": lambda: S.MultiplicativeLR(o, [1.0, 2.0]),
            "plateau_factor": lambda: S.ReduceLROnPlateau(o, factor=1.0),
            "plateau_mode": lambda: S.ReduceLROnPlateau(o, mode="up"),
            "plateau_tmode": lambda: S.ReduceLROnPlateau(o, threshold_mode="x"),
            "plateau_minlr": lambda: S.ReduceLROnPlateau(o, min_lr=[0.1]),
            "warm_T0": lambda: S.CosineAnnealingWarmRestarts(o, T_0=0),
            "warm_Tmult": lambda: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
            "onecycle_total": lambda: S.OneCycleLR(o, 1.0, total_steps=0),
            "onecycle_none": lambda: S.OneCycleLR(o, 1.0),
            "onecycle_pct": lambda: S.OneCycleLR(o, 1.0, total_steps=5, pct_start=1.5),
            "onecycle_anneal": lambda: S.OneCycleLR(o, 1.0, total_steps=5, anneal_strategy="x"),
            "onecycle_momentum": lambda: S.OneCycleLR(
                lib.optim.Adagrad([lib.nn.Parameter(lib.ones(1))]), 1.0, total_steps=5),
            "cyclic_mode": lambda: S.CyclicLR(o, 0.1, 1.0, mode="x"),
            "seq_empty": lambda: S.SequentialLR(o, [], []),
            "seq_milestones": lambda: S.SequentialLR(o, [S.StepLR(o, 2)], [3]),
            "seq_plateau": lambda: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], []),
            "seq_other_opt": lambda: S.SequentialLR(o, [S.StepLR(_opt(lib), 2)], []),
            "chain_empty": lambda: S.ChainedScheduler([]),
            "format_param": lambda: S.OneCycleLR(o, [1.0], total_steps=5),
        }[case]

    _err(make(jtorch), make(torch))


def test_tensor_lr_is_filled_in_place():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    lr = jtorch.tensor(0.1)
    opt = jtorch.optim.SGD([p], lr=lr)
    sched = jtorch.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)
