"""Recurrent layers: ``lstm_layer``, one LSTM layer and direction over a whole sequence, and its
backward ``lstm_layer_backward``; ``rnn_layer_steps``, the same layer (and the RNN and GRU
ones) as a loop of jtorch ops over the time steps.

Step by step, an LSTM layer is a few hundred autograd nodes per sequence (a matrix product,
the gate nonlinearities and the state update at each step), and their Python cost dominated
training small models (a 2-layer, 64-wide language model ran 5x slower than torch). The fused
op is one node: its CPU kernel (``kernels/cpu/rnn.py``) projects the inputs of every step with
one matrix product, then runs the steps in one compiled loop (one small product per step, the
gate math fused), keeping the gates and the previous states in a workspace for the backward
kernel, which walks the steps in reverse and forms the weight gradients with one product each
over the whole sequence. The workspace is a uint8 output, like cuDNN's reserve.

Sequences are packed as in ``nn.utils.rnn.PackedSequence``: ``x`` holds ``batch_sizes[t]``
rows for step t (a padded (T, B) input is T steps of B rows), a step runs on the first
``batch_sizes[t]`` states and the other rows keep theirs, so h_n is each sequence's last state
in either direction. Gates follow torch's layout (i, f, g, o); with ``w_hr`` (``proj_size``)
the state h is the projection of o * tanh(c).

A gradient of the gradient (``create_graph=True``) replays the layer with ``rnn_layer_steps``
on the saved inputs and differentiates that, so double backward works as it does step by step.
"""

from __future__ import annotations

import itertools

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device
from ..registry import defvjp, op
from ._lazy import lazy

_RK = "jtorch.kernels.cpu.rnn"  # imported at the first call (_lazy.py)


def _J():
    import jtorch

    return jtorch


# -- the layer as jtorch ops, one step at a time ----------------------------------------------

def _step(mode: str, xt, h, c, w_hh, b_hh, w_hr) -> tuple:
    """One time step: ``xt`` is the input projection of the running rows, h/c their state."""
    hp = _J().matmul(h, w_hh.t())
    if b_hh is not None:
        hp = hp + b_hh
    if mode == "LSTM":
        i, f, g, o = (xt + hp).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (_J().matmul(h, w_hr.t()) if w_hr is not None else h), c
    if mode == "GRU":
        n3 = hp.shape[1] // 3
        r = (xt[:, :n3] + hp[:, :n3]).sigmoid()
        z = (xt[:, n3:2 * n3] + hp[:, n3:2 * n3]).sigmoid()
        n = (xt[:, 2 * n3:] + r * hp[:, 2 * n3:]).tanh()
        return (1 - z) * n + z * h, c
    pre = xt + hp
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), c


def rnn_layer_steps(mode: str, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes,
                    reverse: bool) -> tuple:
    """One layer and direction of an RNN/LSTM/GRU (``mode`` as ``RNNBase.mode``) as jtorch
    ops. x: packed steps (N, in), ``batch_sizes[t]`` rows at step t; h0, c0 (None but for
    LSTM): (B, H) at the start. Returns the outputs (N, H) and each sequence's final h, c: as
    in torch's packed layers, the forward pass drops the rows of sequences that ended (keeping
    their state) and the reverse pass takes them in."""
    J = _J()
    xp = J.matmul(x, w_ih.t())
    if b_ih is not None:
        xp = xp + b_ih
    starts = [0]
    for n in batch_sizes[:-1]:
        starts.append(starts[-1] + n)
    outs = [None] * len(batch_sizes)
    ended_h, ended_c = [], []
    h, c = h0, c0
    if reverse:
        h, c = h0[:batch_sizes[-1]], c0[:batch_sizes[-1]] if c0 is not None else None
    for t in (range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(outs))):
        n, rows = batch_sizes[t], h.shape[0]
        if n < rows:  # forward: sequences [n, rows) ended at the previous step
            ended_h.append(h[n:])
            ended_c.append(c[n:] if c is not None else None)
            h, c = h[:n], c[:n] if c is not None else None
        elif n > rows:  # reverse: sequences [rows, n) start at this step
            h = J.cat([h, h0[rows:n]])
            c = J.cat([c, c0[rows:n]]) if c is not None else None
        h, c = _step(mode, xp[starts[t]:starts[t] + n], h, c, w_hh, b_hh, w_hr)
        outs[t] = h
    if ended_h:
        h = J.cat([h, *ended_h[::-1]])
        c = J.cat([c, *ended_c[::-1]]) if c is not None else None
    return J.cat(outs), h, c


# -- the fused op -----------------------------------------------------------------------------

def _shape_error(what: str, t, expected: tuple) -> RuntimeError:
    return RuntimeError(f"lstm_layer: expected {what} of size {list(expected)}, got "
                        f"{list(t._a.shape)}")


def _check(what: str, t, expected: tuple, dtype) -> None:
    if t._a.shape != expected:
        raise _shape_error(what, t, expected)
    if t.dtype is not dtype:
        raise RuntimeError(f"lstm_layer: expected {what} to have dtype {dtype}, got {t.dtype}")


def workspace_size(n: int, hidden: int, real_hidden: int, itemsize: int) -> int:
    """Bytes of the workspace: per packed row, the four activated gates, the previous h and
    the previous c."""
    return n * (5 * hidden + real_hidden) * itemsize


def _lstm_layer_meta(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, *, batch_sizes: tuple,
                     reverse: bool) -> Plan:
    dev = common_device(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
    d = x.dtype
    if d not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"lstm_layer: expected a float32 or float64 input, got {d}")
    if x._a.ndim != 2:
        raise RuntimeError(f"lstm_layer: expected a 2-D input (packed steps), got {x._a.ndim}-D")
    n, isz = x._a.shape
    gates = w_ih._a.shape[0]
    if gates % 4 or not batch_sizes:
        raise _shape_error("weight_ih", w_ih, (4 * max(gates // 4, 1), isz))
    hidden = gates // 4
    real = w_hr._a.shape[0] if w_hr is not None else hidden
    batch = batch_sizes[0]
    if sum(batch_sizes) != n or any(b > a for a, b in itertools.pairwise(batch_sizes)):
        raise RuntimeError(f"lstm_layer: batch_sizes {list(batch_sizes)} do not describe the "
                           f"{n} packed rows of the input")
    _check("weight_ih", w_ih, (gates, isz), d)
    _check("weight_hh", w_hh, (gates, real), d)
    _check("hx", h0, (batch, real), d)
    _check("cx", c0, (batch, hidden), d)
    for what, b in (("bias_ih", b_ih), ("bias_hh", b_hh)):
        if b is not None:
            _check(what, b, (gates,), d)
    if w_hr is not None:
        _check("weight_hr", w_hr, (real, hidden), d)
    ws = workspace_size(n, hidden, real, d.itemsize)
    out = (Out((n, real), d), Out((batch, real), d), Out((batch, hidden), d), Out((ws,), _dt.uint8))
    return Plan(out, {"batch_sizes": tuple(batch_sizes), "reverse": bool(reverse)}, dev)


def _lstm_layer_backward_meta(gy, ghn, gcn, x, w_ih, w_hh, w_hr, ws, *, batch_sizes: tuple,
                              reverse: bool, need_x: bool) -> Plan:
    dev = common_device(gy, ghn, gcn, x, w_ih, w_hh, w_hr, ws)
    d = x.dtype
    batch = batch_sizes[0]
    hidden = w_ih._a.shape[0] // 4
    real = w_hh._a.shape[1]
    n = x._a.shape[0]
    _check("grad_output", gy, (n, real), d)
    _check("grad_hy", ghn, (batch, real), d)
    _check("grad_cy", gcn, (batch, hidden), d)
    out = (Out(x._a.shape, d), Out((batch, real), d), Out((batch, hidden), d),
           Out(w_ih._a.shape, d), Out(w_hh._a.shape, d), Out((4 * hidden,), d),
           Out((real, hidden) if w_hr is not None else (0, 0), d))
    return Plan(out, {"batch_sizes": batch_sizes, "reverse": reverse, "need_x": need_x}, dev)


def _lstm_layer_vjp(c, g):
    gy, ghn, gcn, _ = g
    if dispatch.grad_state.enabled:  # create_graph: differentiate the step-by-step layer
        return _lstm_layer_replay_vjp(c, (gy, ghn, gcn))
    x, _, _, w_ih, w_hh, b_ih, _, w_hr = c.args
    ws = c.out[3]
    kw = c.kw
    dx, dh0, dc0, dw_ih, dw_hh, db, dw_hr = lstm_layer_backward_op(
        gy, ghn, gcn, x, w_ih, w_hh, w_hr, ws, batch_sizes=kw["batch_sizes"],
        reverse=kw["reverse"], need_x=c.needs[0])
    has_b = b_ih is not None
    return (dx if c.needs[0] else None, dh0, dc0, dw_ih, dw_hh, db if has_b else None,
            db if has_b else None, dw_hr if w_hr is not None else None)


def _lstm_layer_replay_vjp(c, grads: tuple) -> tuple:
    """The gradients as functions of the inputs (for a further derivative): replay the layer
    step by step from aliases of the saved inputs and differentiate it to the aliases."""
    from ...autograd import grad

    ins = list(c.args)
    want = [i for i, t in enumerate(ins) if t is not None and c.needs[i]]
    for i in want:
        ins[i] = ins[i].view(ins[i].shape)  # a node of its own: the replay's gradients stop here
    outs = rnn_layer_steps("LSTM", *ins, c.kw["batch_sizes"], c.kw["reverse"])
    got = grad(outs, [ins[i] for i in want], grads, create_graph=True, allow_unused=True)
    res = [None] * len(ins)
    for i, r in zip(want, got):
        res[i] = r
    return tuple(res)


# (x (N, in), h0 (B, P), c0 (B, H), w_ih, w_hh, b_ih | None, b_hh | None, w_hr | None)
#   -> (y (N, P), h_n (B, P), c_n (B, H), workspace (uint8)) {batch_sizes, reverse}
lstm_layer_op = op("lstm_layer", "extern", _lstm_layer_meta, lazy(_RK, "lstm_layer_cpu"))
# (grad y, grad h_n, grad c_n, x, w_ih, w_hh, w_hr | None, workspace)
#   -> (grad x, grad h0, grad c0, grad w_ih, grad w_hh, grad bias, grad w_hr ((0, 0) if none))
lstm_layer_backward_op = op("lstm_layer_backward", "extern", _lstm_layer_backward_meta,
                            lazy(_RK, "lstm_layer_backward_cpu"))
defvjp(lstm_layer_op, _lstm_layer_vjp, "01234567o", name="LstmLayerBackward0")
lstm_layer_op.pair, lstm_layer_backward_op.pair = lstm_layer_backward_op, lstm_layer_op
