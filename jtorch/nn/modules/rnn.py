"""Recurrent layers: RNN (tanh/relu), LSTM (with proj_size), GRU, and their cells.

Each layer and direction projects the whole input sequence with one matrix product, then
steps through time with one (batch, hidden) product per step; gates follow torch's layouts
(LSTM: i, f, g, o; GRU: r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))).
Every input runs as packed steps (``nn.utils.rnn.PackedSequence``; a padded (T, B) input is
T steps of B), so a step's batch shrinks as sequences end, and h_n is each one's last state.
An LSTM layer on CPU (or meta) float32/float64 tensors is one fused op (``lstm_layer``, one
autograd node and one compiled loop over the steps); other layers and devices run the steps
as jtorch ops (``rnn_layer_steps``, kernels/defs/rnn.py).
"""

from __future__ import annotations

import math

from ... import dtypes as _dt
from ...kernels.defs.rnn import lstm_layer_op, rnn_layer_steps
from ...ops import creation as _c
from .. import init
from ..parameter import Parameter
from .module import Module, factory_kwargs

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _J():
    import jtorch

    return jtorch


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero" if
                             isinstance(hidden_size, int) else
                             f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than or equal to 1")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        kw = factory_kwargs(device, dtype)
        gates = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_in = input_size if layer == 0 else real_hidden * (2 if bidirectional else 1)
                sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                names = [f"weight_ih{sfx}", f"weight_hh{sfx}"]
                shapes = [(gates, layer_in), (gates, real_hidden)]
                if bias:
                    names += [f"bias_ih{sfx}", f"bias_hh{sfx}"]
                    shapes += [(gates,), (gates,)]
                if proj_size > 0:
                    names.append(f"weight_hr{sfx}")
                    shapes.append((proj_size, hidden_size))
                for n, s in zip(names, shapes):
                    setattr(self, n, Parameter(_c.empty(s, **kw)))
                self._flat_weights_names += names
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, in torch's order (w_ih, w_hh[, b_ih, b_hh]
        [, w_hr])."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """torch packs the weights into one cuDNN buffer; on CPU (jtorch's only device) that
        is a no-op, as in torch."""

    # -- torch's argument checks (forward runs them; subclasses may override them) -----------
    def check_input(self, input, batch_sizes) -> None:
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w0.dtype}). Convert input: input.to({w0.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, hidden)

    def check_hidden_size(self, hx, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """``hx`` with its batch (dim 1) in ``permutation``'s order (None: as it is)."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- one layer, one direction ----------------------------------------------------------
    def _weights(self, layer: int, direction: int) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        g = lambda n: getattr(self, n + sfx, None)
        return g("weight_ih"), g("weight_hh"), g("bias_ih"), g("bias_hh"), g("weight_hr")

    def _run_direction(self, x, h, c, layer: int, direction: int, batch_sizes: list):
        """x: packed steps (N, in), ``batch_sizes[t]`` rows at step t; h, c: (B, H) at the
        start. Returns the outputs (N, H) and each sequence's final h, c."""
        weights = self._weights(layer, direction)
        if self.mode == "LSTM" and _fusable(x, h, c, weights):
            y, h, c, _ = lstm_layer_op(x, h, c, *weights, batch_sizes=tuple(batch_sizes),
                                       reverse=direction == 1)
            return y, h, c
        return rnn_layer_steps(self.mode, x, h, c, *weights, batch_sizes, direction == 1)

    def _initial_hidden(self, hx, batched: bool, batch: int, like):
        """hx as (layers * directions, batch, hidden) (a pair for LSTM), zeros like ``like``
        when None, after torch's dimension checks; an unbatched hx gains its batch dim."""
        J = _J()
        is_lstm = self.mode == "LSTM"
        if hx is None:
            ndir = 2 if self.bidirectional else 1
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            kw = {"dtype": like.dtype, "device": like.device}
            h0 = J.zeros(self.num_layers * ndir, batch, real_hidden, **kw)
            return (h0, J.zeros(self.num_layers * ndir, batch, self.hidden_size, **kw)) \
                if is_lstm else h0
        dims = 3 if batched else 2
        what = "batched 3-D" if batched else "unbatched 2-D"
        if is_lstm and (hx[0].dim() != dims or hx[1].dim() != dims):
            raise RuntimeError(f"For {what} input, hx and cx should also be {dims}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        if not is_lstm and hx.dim() != dims:
            raise RuntimeError(f"For {what} input, hx should also be {dims}-D but got "
                               f"{hx.dim()}-D tensor")
        if batched:
            return hx
        return (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if is_lstm else hx.unsqueeze(1)

    def forward(self, input, hx=None):
        J = _J()
        from ..utils.rnn import PackedSequence

        packed = isinstance(input, PackedSequence)
        is_lstm = self.mode == "LSTM"
        if packed:
            input, sizes, sorted_indices, unsorted_indices = input
            batched = True
            if hx is None:  # zeros for the largest batch (the first step's)
                hx = self._initial_hidden(None, True, int(sizes[0]), input)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                kind = "RNN" if self.mode.startswith("RNN") else self.mode
                tensor = " tensor" if kind == "RNN" else ""
                raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {input.dim()}D"
                                 f"{tensor} instead")
            batched = input.dim() == 3
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            batch = input.size(0) if self.batch_first else input.size(1)
            hx = self._initial_hidden(hx, batched, batch, input)
        self.check_forward_args(input, hx, sizes)
        if packed:
            batch_sizes = sizes.tolist()
            x = input
        else:
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            batch_sizes = [batch] * steps
            x = input.reshape(steps * batch, input.shape[-1])
        if not batch_sizes:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        h0, c0 = hx if is_lstm else (hx, None)
        ndir = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(ndir):
                k = layer * ndir + direction
                o, h, c = self._run_direction(x, h0[k], c0[k] if c0 is not None else None,
                                              layer, direction, batch_sizes)
                outs.append(o)
                hs.append(h)
                cs.append(c)
            x = outs[0] if ndir == 1 else J.cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = J.nn.functional.dropout(x, self.dropout, True)
        hidden = (J.stack(hs), J.stack(cs)) if is_lstm else J.stack(hs)
        if packed:
            return (PackedSequence(x, sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        out = x.reshape(len(batch_sizes), batch, x.shape[-1])
        if not batched:
            out = out.squeeze(1)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1)) if is_lstm \
                else hidden.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, hidden


def _fusable(x, h, c, weights) -> bool:
    """Whether ``lstm_layer`` runs this LSTM layer: CPU (or meta) float32/float64 tensors of
    one dtype; anything else runs step by step, with the errors the steps raise."""
    d = x.dtype
    if x.device.type not in ("cpu", "meta") or d not in _FUSED_DTYPES:
        return False
    for t in (h, c, *weights):
        if t is not None and (t.dtype is not d or t.device != x.device):
            return False
    return True


_FUSED_DTYPES = (_dt.float32, _dt.float64)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = factory_kwargs(device, dtype)
        self.weight_ih = Parameter(_c.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_c.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_c.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_c.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _proj(self, x, h):
        J = _J()
        xp = J.matmul(x, self.weight_ih.t())
        hp = J.matmul(h, self.weight_hh.t())
        if self.bias:
            xp, hp = xp + self.bias_ih, hp + self.bias_hh
        return xp, hp

    def _batched(self, input, hx, n_state: int):
        J = _J()
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = J.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (z, z) if n_state == 2 else z
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if n_state == 2 else hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._batched(input, hx, 1)
        xp, hp = self._proj(input, hx)
        h = (xp + hp).tanh() if self.nonlinearity == "tanh" else (xp + hp).relu()
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._batched(input, hx, 2)
        xp, hp = self._proj(input, h)
        i, f, g, o = (xp + hp).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, h, batched = self._batched(input, hx, 1)
        xp, hp = self._proj(input, h)
        H = self.hidden_size
        r = (xp[:, :H] + hp[:, :H]).sigmoid()
        z = (xp[:, H:2 * H] + hp[:, H:2 * H]).sigmoid()
        n = (xp[:, 2 * H:] + r * hp[:, 2 * H:]).tanh()
        h = (1 - z) * n + z * h
        return h if batched else h.squeeze(0)
