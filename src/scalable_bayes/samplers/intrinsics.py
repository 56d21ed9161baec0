"""Low-level Numba intrinsics shared by the compiled gradient kernels.

``prefetch(arr, byte_offset)`` emits LLVM's ``llvm.prefetch`` (read, keep in all cache levels) for
the byte at ``arr.ctypes.data + byte_offset``; ``prefetch_l2`` the same with locality 2 (L2). A prefetch never faults and never changes any
value: it only starts the cache-line load early, so a minibatch gradient can request all its
random rows at once (the misses overlap) before it computes with them. Offsets outside the
array are harmless (the hardware drops prefetches to unmapped addresses).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _make_prefetch(locality, doc):
    @intrinsic
    def _prefetch(typingctx, arr, byte_offset):
        if not isinstance(arr, types.Array) or not isinstance(byte_offset, types.Integer):
            return None
        return types.void(arr, byte_offset), _codegen(locality)

    _prefetch.__doc__ = doc
    return _prefetch


def _codegen(locality):

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i64 = ir.IntType(64)
        off = context.cast(builder, args[1], signature.args[1], types.int64)
        addr = builder.add(builder.ptrtoint(ary.data, i64), off)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # args: address, rw = 0 (read), locality, cache type = 1 (data)
        builder.call(fn, [builder.inttoptr(addr, i8p), ir.Constant(i32, 0), ir.Constant(i32, locality),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return codegen


prefetch = _make_prefetch(3, "Prefetch the cache line holding byte ``byte_offset`` of array ``arr`` "
                             "(read, locality 3: into L1, x86 prefetcht0).")
prefetch_l2 = _make_prefetch(2, "Prefetch the cache line holding byte ``byte_offset`` of array ``arr`` "
                                "(read, locality 2: into L2 and below, x86 prefetcht1).")
