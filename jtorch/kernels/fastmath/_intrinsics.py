"""LLVM intrinsics the fastmath functions are built from: float<->int bit casts, IEEE division
(no ZeroDivisionError check), ``llvm.fma``, ``llvm.fmuladd`` and ``llvm.sqrt``, all for
``target='generic'`` (CPU and CUDA)."""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _int_to_width(builder, value, from_type, bits):
    """Sign-extend or truncate an integer LLVM value to ``bits`` bits."""
    if from_type.bitwidth == bits:
        return value
    if from_type.bitwidth > bits:
        return builder.trunc(value, ir.IntType(bits))
    if from_type.signed:
        return builder.sext(value, ir.IntType(bits))
    return builder.zext(value, ir.IntType(bits))


@intrinsic(target="generic")
def _f32_as_i32(typingctx, x):
    """Reinterpret the bits of a float32 as int32."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


@intrinsic(target="generic")
def _i32_as_f32(typingctx, x):
    """Reinterpret the low 32 bits of an integer as float32 (Numba widens int arithmetic to
    int64, so any integer type is accepted and truncated)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(_int_to_width(builder, args[0], x, 32), ir.FloatType())

    return types.float32(x), codegen


@intrinsic(target="generic")
def _f64_as_i64(typingctx, x):
    """Reinterpret the bits of a float64 as int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic(target="generic")
def _i64_as_f64(typingctx, x):
    """Reinterpret a (sign-extended) integer as the bits of a float64."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(_int_to_width(builder, args[0], x, 64), ir.DoubleType())

    return types.float64(x), codegen


def _ternary_float_intrinsic(llvm_name):
    def typer(typingctx, a, b, c):
        if not (isinstance(a, types.Float) and a == b == c):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            suffix = "f32" if lty == ir.FloatType() else "f64"
            fnty = ir.FunctionType(lty, [lty, lty, lty])
            fn = cgutils.get_or_insert_function(builder.module, fnty, f"{llvm_name}.{suffix}")
            return builder.call(fn, args)

        return a(a, b, c), codegen

    return typer


@intrinsic(target="generic")
def _div(typingctx, a, b):
    """a / b as a plain IEEE division (no ZeroDivisionError check, so it vectorises)."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, sig, args):
        return builder.fdiv(args[0], args[1])

    return a(a, b), codegen


# _fma(a, b, c): a*b + c with a single rounding (``llvm.fma``).
_fma = intrinsic(target="generic")(_ternary_float_intrinsic("llvm.fma"))
# _mla(a, b, c): a*b + c, fused if the target has FMA (``llvm.fmuladd``); for polynomials.
_mla = intrinsic(target="generic")(_ternary_float_intrinsic("llvm.fmuladd"))


def _unary_float_intrinsic(llvm_name):
    def typer(typingctx, a):
        if not isinstance(a, types.Float):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            suffix = "f32" if lty == ir.FloatType() else "f64"
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(lty, [lty]), f"{llvm_name}.{suffix}"
            )
            return builder.call(fn, args)

        return a(a), codegen

    return typer


# _sqrt(x): IEEE square root (nan for x < 0, no exception).
_sqrt = intrinsic(target="generic")(_unary_float_intrinsic("llvm.sqrt"))


# -- integer arithmetic that wraps ------------------------------------------------------------
# Numba's signed integer add, sub and mul carry LLVM's no-signed-wrap flag: an overflow is then
# undefined, and LLVM may fold what reads it (sign(x * x) to x != 0, where the product stored
# by eager's kernel wraps to 0, as torch's does). The integer ops' scalar functions use these,
# which wrap at the type's width; bools are added and multiplied as Python's ints (int64).

def _wrapping(name: str):
    def typer(typingctx, a, b):
        if isinstance(a, types.Boolean) and isinstance(b, types.Boolean):
            rt = types.int64
        elif isinstance(a, types.Integer) and a == b:
            rt = a
        else:
            return None

        def codegen(context, builder, sig, args):
            x, y = args
            if rt is not sig.args[0]:  # bools: widened as Python's ints
                x, y = builder.zext(x, ir.IntType(64)), builder.zext(y, ir.IntType(64))
            return getattr(builder, name)(x, y)

        return rt(a, b), codegen

    return typer


_wrap_add = intrinsic(target="generic")(_wrapping("add"))
_wrap_sub = intrinsic(target="generic")(_wrapping("sub"))
_wrap_mul = intrinsic(target="generic")(_wrapping("mul"))


@intrinsic(target="generic")
def _wrap_neg(typingctx, a):
    """-a of an integer, wrapping (the most negative value is its own negation)."""
    if not isinstance(a, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.neg(args[0])

    return a(a), codegen
