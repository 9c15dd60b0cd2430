"""``CrossMapLRN2d``'s hand-written forward and backward (torch's ``nn/modules/_functions.py``),
as a ``Function`` over jtorch ops. torch computes the window sums as a running sum over the
channels (its window is lopsided: ``c > pre_pad`` drops one channel late) and its gradient from
the saved scale; the same sequence of operations per element gives torch's values and
gradients, not just the textbook formula's. Every step is one op over all batch items and
pixels of a channel (the loops are over channels).
"""

from __future__ import annotations

from ...autograd.function import Function


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        channels = input.size(1)
        square = input.pow(2)
        scale = input.new_zeros(input.shape)
        pre_pad = int((size - 1) / 2 + 1)
        first = scale.select(1, 0)
        for c in range(min(pre_pad, channels)):
            first.add_(square.select(1, c))
        for c in range(1, channels):
            current = scale.select(1, c)
            current.copy_(scale.select(1, c - 1))
            if c < channels - pre_pad + 1:
                current.add_(square.select(1, c + pre_pad - 1), alpha=1)
            if c > pre_pad:
                current.add_(square.select(1, c - pre_pad), alpha=-1)
        scale.mul_(alpha / size).add_(k)
        output = scale.pow(-beta).mul_(input)
        ctx.scale = scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size = ctx.size
        n, channels, h, w = input.shape
        ratio = input.new_zeros((n, channels + size - 1, h, w))
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = ctx.scale.pow(-ctx.beta).mul_(grad_output)
        center = ratio.narrow(1, inverse_pre_pad, channels)
        center.copy_(grad_output * output)
        center.div_(ctx.scale)
        accum = ratio.narrow(1, 0, size - 1).sum(1)
        for c in range(channels):
            accum.add_(ratio.select(1, c + size - 1))
            grad_input.select(1, c).addcmul_(input.select(1, c), accum, value=-cache_ratio_value)
            accum.add_(ratio.select(1, c), alpha=-1)
        return grad_input, None, None, None, None


class BackwardHookFunction(Function):
    """Identity on its tensor arguments (inputs that need no gradient come out marked
    non-differentiable): torch wraps a module's inputs and outputs in it so that backward hooks
    see their gradients."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args
