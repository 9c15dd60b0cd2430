"""torch.special: special functions with torch's names and signatures.

Each is a pointwise OpDef (``kernels/defs/special.py``, or the unary and binary families for the
names torch also has at the top level), so they fuse in compiled graphs and differentiate
like any other op.

>>> import jtorch
>>> jtorch.special.gammaln(jtorch.tensor([0.5, 3.0]))
tensor([0.5724, 0.6931])
"""

from __future__ import annotations

from . import dispatch
from .kernels.defs import special as S
from .ops import pointwise as _p
from .ops import reduction as _r
from .ops import softmax as _s
from .ops import special as _sp
from .ops.misc_numeric import gammainc, gammaincc  # the incomplete gamma functions (igamma)
from .tensor import Tensor

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
           "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

_pw = dispatch.pointwise


def _unary(op, name: str):
    def fn(input: Tensor, *, out=None) -> Tensor:
        _p._check_tensor(input, f"special_{name}")
        return _pw(op, (input,), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name} (OpDef {op.name!r}); integers give the default float dtype."
    return fn


i0e = _unary(S.i0e_op, "i0e")
i1 = _unary(S.i1_op, "i1")
i1e = _unary(S.i1e_op, "i1e")
ndtr = _unary(S.ndtr_op, "ndtr")
ndtri = _unary(S.ndtri_op, "ndtri")
log_ndtr = _unary(S.log_ndtr_op, "log_ndtr")
erfcx = _unary(S.erfcx_op, "erfcx")
entr = _unary(S.entr_op, "entr")


def _binary(op, name: str):
    def fn(input, other, *, out=None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"special_{name}(): argument 'self' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return _pw(op, (input, other), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name} (OpDef {op.name!r}); a Python number on either side."
    return fn


xlog1py = _binary(S.xlog1py_op, "xlog1py")
zeta = _binary(S.zeta_op, "zeta")
xlogy = _binary(_p.B.xlogy_op, "xlogy")


def _bessel(name: str):
    """torch.special's Bessel and Airy functions; a few name their argument ``x``, as torch's."""
    op = S.BESSEL_OPS[name]
    if name in ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                "spherical_bessel_j0"):
        def fn(x: Tensor, *, out=None) -> Tensor:
            if not isinstance(x, Tensor):
                raise TypeError(f"special_{name}(): argument 'x' (position 1) must be Tensor, not "
                                f"{type(x).__name__}")
            return _pw(op, (x,), out)
    else:
        def fn(input: Tensor, *, out=None) -> Tensor:
            _p._check_tensor(input, f"special_{name}")
            return _pw(op, (input,), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.special.{name} (OpDef {name!r}): float32/float64 (integers give the "
                  "default float dtype); not differentiable, as torch's.")
    return fn


def _polynomial(name: str):
    """A polynomial of x of degree n: either may be a Python number (not both), n is truncated
    to an integer, and n < 0 gives 0, as torch's."""
    op = S.POLYNOMIAL_OPS[name]

    def fn(x, n, *, out=None) -> Tensor:
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(
                f"special_{name}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, {type(n).__name__}), but expected one of:\n"
                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                " * (Number x, Tensor n, *, Tensor out = None)\n"
                " * (Tensor x, Number n, *, Tensor out = None)\n")
        return _pw(op, (x, n), out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"torch.special.{name} (OpDef {name!r}): x or n may be a Python number; n is "
                  "truncated to an integer, n < 0 gives 0; not differentiable, as torch's.")
    return fn


airy_ai = _bessel("airy_ai")
bessel_j0 = _bessel("bessel_j0")
bessel_j1 = _bessel("bessel_j1")
bessel_y0 = _bessel("bessel_y0")
bessel_y1 = _bessel("bessel_y1")
modified_bessel_i0 = _bessel("modified_bessel_i0")
modified_bessel_i1 = _bessel("modified_bessel_i1")
modified_bessel_k0 = _bessel("modified_bessel_k0")
modified_bessel_k1 = _bessel("modified_bessel_k1")
scaled_modified_bessel_k0 = _bessel("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _bessel("scaled_modified_bessel_k1")
spherical_bessel_j0 = _bessel("spherical_bessel_j0")
chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")


def gammaln(input: Tensor, *, out=None) -> Tensor:
    """log |Gamma(input)| (torch.lgamma)."""
    return _sp.lgamma(input, out=out)


def digamma(input: Tensor, *, out=None) -> Tensor:
    """The logarithmic derivative of Gamma (torch.digamma)."""
    return _sp.digamma(input, out=out)


psi = digamma


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    return _sp.polygamma(n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out=None) -> Tensor:
    """The multivariate log-gamma (torch.mvlgamma)."""
    return _sp.mvlgamma(input, p, out=out)


def i0(input: Tensor, *, out=None) -> Tensor:
    return _sp.i0(input, out=out)


def expit(input: Tensor, *, out=None) -> Tensor:
    """The logistic sigmoid."""
    return _p.sigmoid(input, out=out)


def logit(input: Tensor, eps=None, *, out=None) -> Tensor:
    return _p.logit(input, eps, out=out)


def sinc(input: Tensor, *, out=None) -> Tensor:
    return _p.sinc(input, out=out)


def erf(input: Tensor, *, out=None) -> Tensor:
    return _p.erf(input, out=out)


def erfc(input: Tensor, *, out=None) -> Tensor:
    return _p.erfc(input, out=out)


def erfinv(input: Tensor, *, out=None) -> Tensor:
    return _p.erfinv(input, out=out)


def exp2(input: Tensor, *, out=None) -> Tensor:
    return _p.exp2(input, out=out)


def expm1(input: Tensor, *, out=None) -> Tensor:
    return _p.expm1(input, out=out)


def log1p(input: Tensor, *, out=None) -> Tensor:
    return _p.log1p(input, out=out)


def round(input: Tensor, *, decimals: int = 0, out=None) -> Tensor:
    return _p.round(input, decimals=decimals, out=out)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    return _r.logsumexp(input, dim, keepdim, out=out)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return _s.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return _s.log_softmax(input, dim, dtype=dtype)
