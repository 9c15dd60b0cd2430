"""torch's ATen-level top-level names (``torch.dropout(x, p, train)``, RNN cells with explicit
weights, ``grid_sampler`` with integer modes, ``native_*`` with saved statistics), buffer
constructors and process flags, each against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import intel_cpu

import jtorch


def _both(make, seed=3):
    torch.manual_seed(seed)
    jtorch.manual_seed(seed)
    return make(torch), make(jtorch)


def _eq(a, b, **tol):
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert str(x.dtype) == str(y.dtype) and tuple(x.shape) == tuple(y.shape)
        if tol:
            np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), **tol)
        else:
            np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())


def _x(lib, *shape, seed=0):
    return lib.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.mark.skipif(intel_cpu(), reason="torch's bernoulli_(p) uses MKL's stream on Intel CPUs")
def test_dropout_family_matches_torch_masks():
    for f in (lambda t: t.dropout(_x(t, 6, 7), 0.3, True), lambda t: t.dropout(_x(t, 4), 0.3, False),
              lambda t: t.dropout_(_x(t, 5, 5), 0.5, True),
              lambda t: t.feature_dropout(_x(t, 2, 5, 3, 3), 0.5, True),
              lambda t: t.feature_dropout_(_x(t, 3, 4, 2), 0.4, True),
              lambda t: t.alpha_dropout(_x(t, 6, 7), 0.3, True),
              lambda t: t.feature_alpha_dropout(_x(t, 2, 5, 3, 3), 0.5, True),
              lambda t: t.native_dropout(_x(t, 6, 7), 0.25, True),
              lambda t: t.native_dropout(_x(t, 6, 7), 0.25, False),
              lambda t: t.native_dropout(_x(t, 3, 4), 1.0, True),
              lambda t: t.rrelu(_x(t, 5))):
        _eq(*_both(f), rtol=1e-6, atol=1e-7)
    # rrelu in training draws torch's slope per element <= 0 (tests/nn/test_rrelu_parity.py)
    _eq(*_both(lambda t: t.rrelu(_x(t, 400), 0.1, 0.3, True)))
    z = _x(jtorch, 30)
    assert jtorch.rrelu_(z, training=True) is z


def test_rnn_cells_with_explicit_weights():
    b, i, h = 3, 5, 4

    def run(t, kind, gates):
        x, hx = _x(t, b, i, seed=1), _x(t, b, h, seed=2)
        w = [_x(t, gates * h, i, seed=3), _x(t, gates * h, h, seed=4), _x(t, gates * h, seed=5),
             _x(t, gates * h, seed=6)]
        for p in [x, hx, *w]:
            p.requires_grad_()
        if kind == "lstm_cell":
            out = t.lstm_cell(x, (hx, hx * 0.5), *w)
            loss = out[0].sum() + out[1].square().sum()
        else:
            out = getattr(t, kind)(x, hx, *w)
            loss = out.square().sum()
        grads = t.autograd.grad(loss, [x, hx, *w])
        return (out if isinstance(out, tuple) else (out,)) + tuple(grads)

    for kind, gates in (("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("lstm_cell", 4),
                        ("gru_cell", 3)):
        _eq(run(torch, kind, gates), run(jtorch, kind, gates), rtol=2e-5, atol=1e-5)
    _eq(torch.gru_cell(_x(torch, 2, 3), _x(torch, 2, 2), _x(torch, 6, 3), _x(torch, 6, 2)),
        jtorch.gru_cell(_x(jtorch, 2, 3), _x(jtorch, 2, 2), _x(jtorch, 6, 3), _x(jtorch, 6, 2)),
        rtol=2e-5, atol=1e-6)


def test_grid_sampler_codes_and_affine_grid_generator():
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                want, got = (t.grid_sampler(_x(t, 2, 3, 5, 6), _x(t, 2, 4, 4, 2, seed=1) * 0.8,
                                            mode, pad, align) for t in (torch, jtorch))
                _eq(want, got, rtol=1e-5, atol=1e-5)
    _eq(torch.grid_sampler_2d(_x(torch, 1, 2, 3, 4), _x(torch, 1, 2, 3, 2, seed=1), 1, 1, True),
        jtorch.grid_sampler_2d(_x(jtorch, 1, 2, 3, 4), _x(jtorch, 1, 2, 3, 2, seed=1), 1, 1, True),
        rtol=1e-6)
    _eq(torch.grid_sampler_3d(_x(torch, 1, 2, 3, 4, 5), _x(torch, 1, 2, 2, 3, 3), 0, 1, False),
        jtorch.grid_sampler_3d(_x(jtorch, 1, 2, 3, 4, 5), _x(jtorch, 1, 2, 2, 3, 3), 0, 1, False),
        rtol=1e-5, atol=1e-6)
    for align in (False, True):
        _eq(torch.affine_grid_generator(_x(torch, 2, 2, 3), [2, 3, 4, 5], align),
            jtorch.affine_grid_generator(_x(jtorch, 2, 2, 3), [2, 3, 4, 5], align), rtol=1e-6,
            atol=1e-6)


def test_native_norms_return_their_statistics():
    def bn(t, training):
        rm, rv = t.zeros(4), t.ones(4)
        out = t.native_batch_norm(_x(t, 5, 4, 3), _x(t, 4, seed=1), _x(t, 4, seed=2), rm, rv,
                                  training, 0.1, 1e-5)
        return (*out, rm, rv)

    for training in (True, False):
        _eq(bn(torch, training), bn(jtorch, training), rtol=1e-5, atol=1e-6)
    _eq(torch.native_group_norm(_x(torch, 2, 6, 5), _x(torch, 6, seed=1), None, 2, 6, 5, 3, 1e-5),
        jtorch.native_group_norm(_x(jtorch, 2, 6, 5), _x(jtorch, 6, seed=1), None, 2, 6, 5, 3,
                                 1e-5), rtol=1e-5, atol=1e-6)
    for dim in (-1, 0, 1, 2):
        _eq(torch.norm_except_dim(_x(torch, 3, 4, 5), 2, dim),
            jtorch.norm_except_dim(_x(jtorch, 3, 4, 5), 2, dim), rtol=1e-6)
    for t in (torch, jtorch):  # a sparse tensors' kernel: dense inputs are refused
        with pytest.raises(NotImplementedError, match="native_norm"):
            t.native_norm(_x(t, 3, 4))
    _eq(torch.rms_norm(_x(torch, 3, 4), [4], _x(torch, 4, seed=1)),
        jtorch.rms_norm(_x(jtorch, 3, 4), [4], _x(jtorch, 4, seed=1)), rtol=1e-6)
    _eq(torch.conv_tbc(_x(torch, 7, 2, 3), _x(torch, 3, 3, 4, seed=1), _x(torch, 4, seed=2), 1),
        jtorch.conv_tbc(_x(jtorch, 7, 2, 3), _x(jtorch, 3, 3, 4, seed=1), _x(jtorch, 4, seed=2),
                        1), rtol=1e-5, atol=1e-5)


def test_small_functions_match_torch():
    c = np.random.default_rng(0).standard_normal((2, 3, 3)) + 1j
    for t in (torch, jtorch):
        assert t.adjoint(t.from_numpy(c)).shape == (2, 3, 3)
    _eq(torch.adjoint(torch.from_numpy(c)).resolve_conj(),
        jtorch.adjoint(jtorch.from_numpy(c)).resolve_conj())
    _eq(torch.adjoint(_x(torch, 2, 3)), jtorch.adjoint(_x(jtorch, 2, 3)))
    _eq(torch.dsplit(_x(torch, 2, 2, 6), 3), jtorch.dsplit(_x(jtorch, 2, 2, 6), 3))
    _eq(torch.dsplit(_x(torch, 2, 2, 6), [1, 4]), jtorch.dsplit(_x(jtorch, 2, 2, 6), [1, 4]))
    for bad in (lambda t: t.dsplit(_x(t, 2, 6), 3), lambda t: t.dsplit(_x(t, 2, 2, 5), 3)):
        with pytest.raises(RuntimeError):
            bad(torch)
        with pytest.raises(RuntimeError):
            bad(jtorch)
    m = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    for size, fill in ((0, -1), (2, -1), (5, 7)):
        _eq(torch.nonzero_static(torch.from_numpy(m), size=size, fill_value=fill),
            jtorch.nonzero_static(jtorch.from_numpy(m), size=size, fill_value=fill))
    _eq(torch.put(_x(torch, 2, 3), torch.tensor([0, 5]), torch.tensor([9.0, 8.0])),
        jtorch.put(_x(jtorch, 2, 3), jtorch.tensor([0, 5]), jtorch.tensor([9.0, 8.0])))
    z = torch.from_numpy(c.copy())
    jz = jtorch.from_numpy(c.copy())
    torch.conj_physical_(z)
    jtorch.conj_physical_(jz)
    _eq(z, jz)
    assert jtorch.is_distributed(_x(jtorch, 2)) is torch.is_distributed(_x(torch, 2))


def test_buffers_share_or_read_memory(tmp_path):
    buf = bytearray(np.arange(10, dtype=np.float32).tobytes())
    a, b = torch.frombuffer(buf, dtype=torch.float32, count=4, offset=8), \
        jtorch.frombuffer(buf, dtype=jtorch.float32, count=4, offset=8)
    _eq(a, b)
    b[0] = 100.0  # the tensor is a view of the buffer
    assert a[0].item() == 100.0
    for bad in ({"count": 20}, {"offset": 40}):
        with pytest.raises(ValueError):
            torch.frombuffer(buf, dtype=torch.float32, **bad)
        with pytest.raises(ValueError):
            jtorch.frombuffer(buf, dtype=jtorch.float32, **bad)
    path = str(tmp_path / "data.bin")
    np.arange(12, dtype=np.float64).tofile(path)
    _eq(torch.from_file(path, size=5, dtype=torch.float64),
        jtorch.from_file(path, size=5, dtype=jtorch.float64))
    shared = jtorch.from_file(path, True, 12, dtype=jtorch.float64)
    shared[0] = -1.0
    del shared
    assert np.fromfile(path, np.float64)[0] == -1.0
    with pytest.raises(RuntimeError):
        jtorch.from_file(path, size=100, dtype=jtorch.float64)
    t = torch.arange(5.0)
    d = jtorch.from_dlpack(t)
    _eq(t, d)
    d[1] = 42.0  # shares torch's memory
    assert t[1].item() == 42.0
    _eq(torch.from_dlpack(np.arange(3)), jtorch.from_dlpack(np.arange(3)))


def test_flags_and_autocast_state():
    assert jtorch.has_lapack and isinstance(jtorch.has_openmp, bool)
    assert jtorch.init_num_threads() is None and jtorch.set_flush_denormal(False) is False
    assert jtorch.legacy_contiguous_format is jtorch.contiguous_format
    assert jtorch.GradScaler is jtorch.amp.GradScaler
    assert issubclass(jtorch.OutOfMemoryError, RuntimeError)
    assert issubclass(jtorch.AcceleratorError, RuntimeError)
    assert jtorch.sym_sqrt(4) == 2.0 and jtorch.sym_sum([1, 2, 3]) == 6
    for t in (torch, jtorch):
        assert not t.is_autocast_enabled("cpu")
        with t.autocast("cpu"):
            assert t.is_autocast_enabled("cpu")
        assert not t.is_autocast_enabled("cpu") and t.is_autocast_cache_enabled()
        t.set_autocast_cache_enabled(False)
        assert not t.is_autocast_cache_enabled()
        t.set_autocast_cache_enabled(True)
        assert t.autocast_increment_nesting() == 1 and t.autocast_decrement_nesting() == 0
        t.clear_autocast_cache()


def test_tensor_methods_beside_them():
    def both(f):
        return f(torch), f(jtorch)

    a = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for f in (lambda t: t.from_numpy(a.copy()).adjoint(),
              lambda t: t.from_numpy(a.copy()).reshape(1, 2, 3).dsplit(3),
              lambda t: t.from_numpy(a.copy()).nonzero_static(size=8, fill_value=-2),
              lambda t: t.ones(2).addmv_(t.ones(2, 3), t.from_numpy(a[0].copy()), beta=2),
              lambda t: t.ones(2, 3).addr_(t.ones(2), t.from_numpy(a[0].copy()), alpha=0.5),
              lambda t: t.ones(3, 4).addbmm_(t.ones(2, 3, 5), t.ones(2, 5, 4)),
              lambda t: t.ones(2, 3, 4).baddbmm_(t.ones(2, 3, 5), t.ones(2, 5, 4), beta=0.5),
              lambda t: t.from_numpy(a.copy()).swapaxes_(0, 1),
              lambda t: t.from_numpy(a.copy()).swapdims_(1, 0),
              lambda t: t.from_numpy(a.copy()).sum_to_size(1, 3),
              lambda t: t.from_numpy(a.copy()).sum_to_size((3,)),
              lambda t: t.from_numpy(a.copy()).apply_(lambda v: v * v + 1),
              lambda t: t.from_numpy(a.copy()).map_(t.ones(3), lambda u, v: u - v),
              lambda t: t.from_numpy(a.copy()).map2_(t.ones(3), t.zeros(2, 1), lambda u, v, w: u * v + w),
              lambda t: t.from_numpy(a.copy()).new(2, 3).shape,
              lambda t: t.from_numpy(a.copy()).new([1, 2]), lambda t: t.from_numpy(a.copy()).new(),
              lambda t: t.from_numpy(a.copy()).new(t.Size([2])).shape):
        want, got = both(f)
        if isinstance(want, (tuple, list)) and want and not isinstance(want[0], torch.Tensor):
            assert tuple(want) == tuple(got)
        else:
            _eq(want, got, rtol=1e-6)
    x, t = jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    assert x.dim_order() == t.dim_order() and x.t().dim_order() == t.t().dim_order()
    assert x.output_nr == t.output_nr == 0 and x.const_data_ptr() == x.data_ptr()
    assert x.is_set_to(x) and not x.is_set_to(x.t()) and not x.is_set_to(x.clone())
    assert jtorch.tensor([2.0]).is_nonzero() and not jtorch.tensor(0).is_nonzero()
    for big in (jtorch.ones(2), jtorch.ones(0)):
        with pytest.raises(RuntimeError, match="ambiguous"):
            big.is_nonzero()
    for t_ in (torch, jtorch):  # resize_: the prefix kept, the shape new
        r = t_.arange(6.0)
        assert r.resize_(2, 2) is r and r.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        r.resize_as_(t_.ones(3))
        assert r.tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(RuntimeError, match="that require grad"):
            t_.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match="not expandable"):
        x.sum_to_size(2, 2)

    class Sub(jtorch.Tensor):
        pass

    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        x.reinforce(1.0)
    with pytest.raises(RuntimeError):
        x.pin_memory()
    assert x.module_load(jtorch.ones(2)).tolist() == [1.0, 1.0]


def test_rrelu_draws_its_training_slopes_from_the_given_generator():
    x = jtorch.randn(500)
    a = jtorch.rrelu(x, training=True, generator=jtorch.Generator().manual_seed(3))
    jtorch.manual_seed(123)  # the default generator's state does not matter
    b = jtorch.rrelu(x, training=True, generator=jtorch.Generator().manual_seed(3))
    c = x.clone()
    jtorch.rrelu_(c, training=True, generator=jtorch.Generator().manual_seed(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    d = jtorch.rrelu(x, training=True, generator=jtorch.Generator().manual_seed(4))
    assert not np.array_equal(a.numpy(), d.numpy())


def test_set_points_at_another_storage_as_torch():
    def run(t):
        a, b = t.zeros(2, 3), t.arange(6.0).view(3, 2)
        v0 = a._version
        a.set_(b)
        out = [a.clone(), tuple(a.stride()), a._version - v0,
               a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()]
        b[0, 0] = 100
        out.append(a[0, 0].item())
        c = t.zeros(5)
        c.set_(b.untyped_storage(), 1, (2, 2), (1, 2))
        out.append(c.clone())
        c.set_(b, 2, (2,))
        out.append(c.clone())
        d = t.ones(3)
        d.set_()
        out.append(tuple(d.shape))
        x = t.zeros(4)
        y = x.view(2, 2)
        x.set_(t.ones(3))
        out.append(y.clone())  # a view keeps the old storage
        return out

    got, want = run(jtorch), run(torch)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        else:
            assert g == w
    for t in (torch, jtorch):
        with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor "
                                               "of type float"):
            t.zeros(2).set_(t.zeros(2, dtype=t.int64))
        w = t.zeros(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            w.set_(t.ones(2))


def test_grad_dtype_as_torch():
    def run(t):
        out = []
        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out.append(str(x.grad_dtype))
        x.grad_dtype = t.float64
        (x * 2).sum().backward()
        out.append((str(x.grad.dtype), x.grad.tolist()))
        x.grad = None
        x.grad_dtype = None
        out.append(str(x.grad_dtype))
        x.grad = t.ones(3, dtype=t.float64)  # any dtype now
        out.append(str(x.grad.dtype))
        for bad in (lambda: setattr(x, "grad_dtype", t.float16),
                    lambda: (x * 2).grad_dtype, lambda: setattr(x * 2, "grad_dtype", t.float64),
                    lambda: setattr(x, "grad_dtype", "float")):
            with pytest.raises(RuntimeError) as e:
                bad()
            out.append(str(e.value))
        y = t.zeros(2, requires_grad=True)
        y.grad_dtype = t.float64
        with pytest.raises(RuntimeError) as e:
            y.grad = t.ones(2)
        out.append(str(e.value))
        return out

    assert run(jtorch) == run(torch)


def test_volatile_and_name_as_torch():
    for t in (torch, jtorch):
        x = t.ones(2)
        with pytest.warns(UserWarning, match="volatile was removed"):
            assert x.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            x.volatile = True
        assert x.name is None
        with pytest.raises(AttributeError):
            x.name = "a"
