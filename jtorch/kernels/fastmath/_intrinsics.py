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
