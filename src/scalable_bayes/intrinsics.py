"""LLVM intrinsics for the Numba kernels: prefetches, atomic add, bit counts, one 8-lane vector loop.

None of these changes what a kernel computes; they give it instructions Numba does not emit:

- ``prefetch(arr, byte_offset)`` / ``prefetch_l2(arr, byte_offset)``: ``llvm.prefetch`` (read) of the
  cache line holding byte ``byte_offset`` of ``arr``, into all cache levels (locality 3, x86
  ``prefetcht0``) / into L2 and below (locality 2, ``prefetcht1``). Offsets outside the array are
  harmless (the hardware drops prefetches to unmapped addresses), so a minibatch gradient can
  request all its random rows at once (the misses overlap) before it computes with them.
- ``prefetch_read(arr, i)`` / ``prefetch_write(arr, i)``: the same for ELEMENT ``i`` of a 1-D array,
  for reading / for writing (locality 3; ``i`` must lie inside the array).
- ``atomic_add(arr, i, val)``: ``arr[i] += val`` as one atomic read-modify-write (``atomicrmw add``,
  monotonic ordering), for counts written by several threads.
- ``popcount64(x)`` / ``ctz64(x)``: number of set bits / index of the lowest set bit (64 for 0) of a
  64-bit integer (``llvm.ctpop.i64`` / ``llvm.cttz.i64``).
- ``float64_bits(x)`` / ``bits_float64(b)``: the IEEE bit pattern of a float64 as an int64, and back
  (``bitcast``, no conversion), for kernels that pack values into a storage format of their own.
- ``dense_row8(ddf, cnt, off, pf, bsum, nrow, beta)``: one <8 x float32> vector loop,
  ``pf[8 r + j] = ddf[8 r + j] * (cnt[off + 8 r + j] + beta)`` and the eight column sums
  ``bsum[j]``, for ESCA's dense word rows.

A leaf module: it imports Numba and llvmlite only.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch", "prefetch_l2", "prefetch_read", "prefetch_write", "atomic_add", "popcount64", "ctz64",
           "float64_bits", "bits_float64", "dense_row8"]


# ---------------------------------------------------------------------------------------------
# software prefetch
# ---------------------------------------------------------------------------------------------


def _make_prefetch(rw, locality, by_byte, doc):
    """``llvm.prefetch`` of a byte offset (``by_byte``, any array) or of an element index (1-D array)
    of an array; ``rw`` 0 = read, 1 = write; ``locality`` 0-3 (3 = keep in all cache levels)."""

    @intrinsic
    def _prefetch(typingctx, arr, pos):
        if not isinstance(arr, types.Array):
            return None
        if by_byte:
            if not isinstance(pos, types.Integer):
                return None
            sig = types.void(arr, pos)
        else:
            if arr.ndim != 1:
                return None
            sig = types.void(arr, types.intp)

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            i8p = ir.IntType(8).as_pointer()
            if by_byte:
                i64 = ir.IntType(64)
                off = context.cast(builder, args[1], sig.args[1], types.int64)
                ptr = builder.inttoptr(builder.add(builder.ptrtoint(ary.data, i64), off), i8p)
            else:
                item = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]], wraparound=False)
                ptr = builder.bitcast(item, i8p)
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            # args: address, rw, locality, cache type = 1 (data)
            builder.call(fn, [ptr, i32(rw), i32(locality), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    _prefetch.__doc__ = doc
    return _prefetch


prefetch = _make_prefetch(0, 3, True, "Prefetch the cache line holding byte ``byte_offset`` of array ``arr`` "
                                      "(read, locality 3: into L1, x86 prefetcht0).")
prefetch_l2 = _make_prefetch(0, 2, True, "Prefetch the cache line holding byte ``byte_offset`` of array ``arr`` "
                                         "(read, locality 2: into L2 and below, x86 prefetcht1).")
prefetch_read = _make_prefetch(0, 3, False, "Prefetch ``arr[i]`` (1-D) for reading into all cache levels.")
prefetch_write = _make_prefetch(1, 3, False, "Prefetch ``arr[i]`` (1-D) for writing into all cache levels.")


# ---------------------------------------------------------------------------------------------
# atomic add, bit counts
# ---------------------------------------------------------------------------------------------


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``arr[idx] += val`` as one atomic read-modify-write (1-D contiguous integer array; ``val`` is
    cast to the array's dtype)."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(val, types.Integer):
        return None
    sig = types.void(arr, types.intp, val)

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        ary = context.make_array(arrty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [args[1]], wraparound=False)
        v = context.cast(builder, args[2], sig.args[2], arrty.dtype)
        builder.atomic_rmw("add", ptr, v, "monotonic")
        return context.get_dummy_value()

    return sig, codegen


def _make_bit_intrinsic(name):
    @intrinsic
    def bitop(typingctx, x):
        if not isinstance(x, types.Integer) or x.bitwidth != 64:
            return None
        sig = types.int64(x)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            if name == "ctpop":
                fnty = ir.FunctionType(i64, [i64])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
                return builder.call(fn, [args[0]])
            fnty = ir.FunctionType(i64, [i64, ir.IntType(1)])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.cttz.i64")
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

        return sig, codegen

    return bitop


#: number of set bits of a 64-bit integer
popcount64 = _make_bit_intrinsic("ctpop")
#: index of the lowest set bit of a 64-bit integer (64 for 0)
ctz64 = _make_bit_intrinsic("cttz")


@intrinsic
def float64_bits(typingctx, x):
    """The IEEE-754 bit pattern of the float64 ``x`` as an int64 (a bitcast)."""
    if not isinstance(x, types.Float) or x.bitwidth != 64:
        return None
    sig = types.int64(x)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def bits_float64(typingctx, b):
    """The float64 whose IEEE-754 bit pattern is the 64-bit integer ``b`` (a bitcast)."""
    if not isinstance(b, types.Integer) or b.bitwidth != 64:
        return None
    sig = types.float64(b)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


# ---------------------------------------------------------------------------------------------
# 8-lane vector loop
# ---------------------------------------------------------------------------------------------


@intrinsic
def dense_row8(typingctx, ddf, cnt, off, pf, bsum, nrow, beta):
    """``pf[8 r + j] = ddf[8 r + j] * (cnt[off + 8 r + j] + beta)`` for r < nrow, j < 8, in 8-lane vector
    code, and the eight column sums ``bsum[j] = sum_r pf[8 r + j]`` (summed over r in order).
    ``ddf`` / ``pf`` / ``bsum`` all float32 (with a float32 ``beta``) or all float64; ``cnt`` uint16 or int32
    counts (1-D contiguous; the caller guarantees 8 nrow elements from ``off``). ESCA's dense word rows
    (float32): ``ddf_k`` = (D_mk + alpha) / (T_k + V beta), ``cnt`` the word's counts W_kv, so ``pf`` is the
    whole conditional; collapsed Gibbs uses the float64 form. The results are those of the scalar
    expressions, element by element (no fused multiply-add: each product and sum is rounded)."""
    floats = (types.float32, types.float64)
    if not (isinstance(ddf, types.Array) and ddf.dtype in floats and isinstance(cnt, types.Array)
            and cnt.dtype in (types.uint16, types.int32) and isinstance(pf, types.Array)
            and pf.dtype == ddf.dtype and isinstance(bsum, types.Array) and bsum.dtype == ddf.dtype):
        return None
    fty = ddf.dtype
    sig = types.void(ddf, cnt, types.intp, pf, bsum, types.intp, fty)

    def codegen(context, builder, sig, args):
        a_ddf, a_cnt, a_off, a_pf, a_bsum, a_nrow, a_beta = args
        lane = ir.FloatType() if fty == types.float32 else ir.DoubleType()
        width = 4 if fty == types.float32 else 8
        v8f = ir.VectorType(lane, 8)
        unsigned = sig.args[1].dtype == types.uint16
        ity = ir.IntType(16 if unsigned else 32)
        v8i = ir.VectorType(ity, 8)
        ddf_p = context.make_array(sig.args[0])(context, builder, a_ddf).data
        cnt_p = builder.gep(context.make_array(sig.args[1])(context, builder, a_cnt).data, [a_off])
        pf_p = context.make_array(sig.args[3])(context, builder, a_pf).data
        bs_p = context.make_array(sig.args[4])(context, builder, a_bsum).data
        bvec = ir.Constant(v8f, ir.Undefined)
        for j in range(8):
            bvec = builder.insert_element(bvec, a_beta, ir.IntType(32)(j))
        acc = cgutils.alloca_once_value(builder, ir.Constant(v8f, [0.0] * 8))
        with cgutils.for_range(builder, a_nrow) as loop:
            o = builder.mul(loop.index, ir.IntType(64)(8))
            c = builder.load(builder.bitcast(builder.gep(cnt_p, [o]), v8i.as_pointer()), align=ity.width // 8)
            cf = builder.uitofp(c, v8f) if unsigned else builder.sitofp(c, v8f)
            d = builder.load(builder.bitcast(builder.gep(ddf_p, [o]), v8f.as_pointer()), align=width)
            x = builder.fmul(d, builder.fadd(cf, bvec))
            builder.store(x, builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()), align=width)
            builder.store(builder.fadd(builder.load(acc), x), acc)
        builder.store(builder.load(acc), builder.bitcast(bs_p, v8f.as_pointer()), align=width)
        return context.get_dummy_value()

    return sig, codegen
