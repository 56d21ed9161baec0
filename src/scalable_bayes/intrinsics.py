"""LLVM intrinsics for the Numba kernels: prefetches, atomic add, bit counts, 8-lane vector loops, fused multiply-add.

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
- ``dense_row8(ddf, cnt, off, pf, bsum, nrow, beta)``: one <8 x float32 / float64> vector loop,
  ``pf[8 r + j] = ddf[8 r + j] * (cnt[off + 8 r + j] + beta)`` and the eight column sums
  ``bsum[j]``, for collapsed Gibbs's dense conditional; ``dense_prefix8`` the same loop storing the running
  column sums in ``pf``, for ESCA's dense word rows; ``column_count_le8(pf, first, n, step, x, j)``: how many of
  ``n`` rows (``first``, every ``step``) of column ``j`` of such an array are <= ``x``, all eight columns
  compared at once (the row search of ESCA's draw for K > 128); ``stack_columns8(pf, bsum, nrow)`` turns
  the running column sums into running sums over all entries column after column, and ``count_le16(pf,
  nvec, x)`` counts the entries <= ``x`` sixteen at a time (the whole draw in one pass for K <= 128).
- ``dot8(w, i, x, n)`` / ``dot8x4(w, i0, i1, i2, i3, x, n)``: dot products of rows of ``w`` with ``x`` in
  <8 x double> vector code with one fixed summation order (the logistic regression gradient's minibatch dot
  products), the same bits wherever they are compiled; ``fma(a, b, c)``: a * b + c rounded once.
- ``matvec_lanes8x4(a, b, out, i0, nrows, s0, j0, n, add)``: up to four rows by eight columns of ``a' b``
  (rows j0..j0+n-1), each entry summed in the plain order with the partial sums kept in registers, stored or
  added to ``out`` (SAM: G theta for eight documents at once, the Gram matrix, the gradient's dense part);
  ``weighted_outer_lanes8x4(a, f, d, out, i0, nrows, s0, n)`` the same for sum_t a_t a_t' f_t / d_t.

A leaf module: it imports Numba and llvmlite only.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch", "prefetch_l2", "prefetch_read", "prefetch_write", "atomic_add", "popcount64", "ctz64",
           "float64_bits", "bits_float64", "dense_row8", "dense_prefix8", "column_count_le8", "stack_columns8",
           "count_le16", "dot8", "dot8x4", "fma",
           "matvec_lanes8x4", "weighted_outer_lanes8x4"]


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


def _dense_rows(prefix):
    """The typing and code of :func:`dense_row8` (``prefix`` False: ``pf`` gets the products) and
    :func:`dense_prefix8` (``prefix`` True: ``pf`` gets the running column sums)."""

    def typer(typingctx, ddf, cnt, off, pf, bsum, nrow, beta):
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
                total = builder.fadd(builder.load(acc), x)
                builder.store(total if prefix else x, builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()),
                              align=width)
                builder.store(total, acc)
            builder.store(builder.load(acc), builder.bitcast(bs_p, v8f.as_pointer()), align=width)
            return context.get_dummy_value()

        return sig, codegen

    return typer


@intrinsic
def dense_row8(typingctx, ddf, cnt, off, pf, bsum, nrow, beta):
    """``pf[8 r + j] = ddf[8 r + j] * (cnt[off + 8 r + j] + beta)`` for r < nrow, j < 8, in 8-lane vector
    code, and the eight column sums ``bsum[j] = sum_r pf[8 r + j]`` (summed over r in order).
    ``ddf`` / ``pf`` / ``bsum`` all float32 (with a float32 ``beta``) or all float64; ``cnt`` uint16 or int32
    counts (1-D contiguous; the caller guarantees 8 nrow elements from ``off``). Collapsed Gibbs: ``ddf_k``
    = (D_mk + alpha) / (T_k + V beta), ``cnt`` the word's counts W_kv (float64), so ``pf`` is the whole
    conditional. The results are those of the scalar expressions, element by element (no fused
    multiply-add: each product and sum is rounded)."""
    return _dense_rows(False)(typingctx, ddf, cnt, off, pf, bsum, nrow, beta)


@intrinsic
def dense_prefix8(typingctx, ddf, cnt, off, pf, bsum, nrow, beta):
    """:func:`dense_row8` storing the running column sums instead of the products:
    ``pf[8 r + j] = sum_{q <= r} ddf[8 q + j] * (cnt[off + 8 q + j] + beta)``, each the same rounded sum in
    the same order as the column sums, so ``pf[8 (nrow - 1) + j] == bsum[j]``; non-decreasing down each
    column when the products are non-negative (rounding to nearest is monotone). ESCA's dense word rows
    (float32): a draw finds its row in a column by counting the running sums below its target, without a
    chain of dependent additions (:func:`scalable_bayes.inference.lda._kernels.esca_word._dense_entry`)."""
    return _dense_rows(True)(typingctx, ddf, cnt, off, pf, bsum, nrow, beta)


@intrinsic
def column_count_le8(typingctx, pf, first, n, step, x, j):
    """The number of rows r = first, first + step, ..., first + (n - 1) step (``n`` rows) whose entry in
    column ``j`` of the row-major 8-column array ``pf`` (entry ``pf[8 r + j]``, float32 or float64, 1-D
    contiguous) is <= ``x`` (float64; compared in double precision, exactly; NaN entries do not count).
    Each row is compared whole in 8-lane vector code (one load, one compare, one subtraction of its all-ones
    lanes from eight lane counts; lane ``j`` of those read once at the end): no strided gather, no
    data-dependent branch. On a column that does not decrease this is the index of the first entry above
    ``x`` (inverse CDF over running sums: :func:`dense_prefix8`)."""
    if not (isinstance(pf, types.Array) and pf.dtype in (types.float32, types.float64)
            and all(isinstance(t, types.Integer) for t in (first, n, step, j)) and isinstance(x, types.Float)):
        return None
    sig = types.intp(pf, types.intp, types.intp, types.intp, types.float64, types.intp)

    def codegen(context, builder, sig, args):
        a_pf, a_first, a_n, a_step, a_x, a_j = args
        f64 = ir.DoubleType()
        narrow = sig.args[0].dtype == types.float32
        lane = ir.FloatType() if narrow else f64
        v8f = ir.VectorType(lane, 8)
        v8d = ir.VectorType(f64, 8)
        i64 = ir.IntType(64)
        pf_p = context.make_array(sig.args[0])(context, builder, a_pf).data
        xv = ir.Constant(v8d, ir.Undefined)
        for q in range(8):
            xv = builder.insert_element(xv, a_x, ir.IntType(32)(q))
        # eight lane counts in a vector register (subtract each compare's all-ones lanes), lane j read once at the end:
        # with 4-lane double compares (AVX2) the eight comparisons as the bits of one byte take a pack and a
        # lane-crossing permute per row
        v8q = ir.VectorType(i64, 8)
        acc = cgutils.alloca_once_value(builder, ir.Constant(v8q, [0] * 8))
        with cgutils.for_range(builder, a_n) as loop:
            r = builder.add(a_first, builder.mul(loop.index, a_step))
            o = builder.mul(r, i64(8))
            v = builder.load(builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()), align=4 if narrow else 8)
            if narrow:
                v = builder.fpext(v, v8d)
            le = builder.sext(builder.fcmp_ordered("<=", v, xv), v8q)  # -1 in the lanes counted
            builder.store(builder.sub(builder.load(acc), le), acc)
        # (a column outside 0..7 counts nothing, as the bit it used to read: no lane read out of range)
        lane = builder.extract_element(builder.load(acc), builder.and_(a_j, i64(7)))
        return builder.select(builder.icmp_unsigned("<", a_j, i64(8)), lane, i64(0))

    return sig, codegen


@intrinsic
def stack_columns8(typingctx, pf, bsum, nrow):
    """Turn the running column sums of :func:`dense_prefix8` (float32, ``pf[8 (nrow - 1) + j] == bsum[j]``) into
    running sums over ALL entries taken column after column: ``pf[8 r + j] += b_j`` for r < nrow, with
    ``b_0 = 0`` and ``b_(j+1) = b_j + bsum[j]`` (float32, each sum rounded, left to right). Returns the total
    ``b_7 + bsum[7]`` (float32). With non-negative products the result does not decrease in the
    column-major order (column 0 top to bottom, then column 1, ...): a column's last entry rounds to exactly
    ``b_(j+1)``, and rounding to nearest is monotone. Rows from ``nrow`` on keep their values (with an odd
    ``nrow`` row ``nrow`` is read and written back unchanged, ``pf`` must hold it: 8 (nrow + 1) entries). The
    rows are written two at a time, in the 16-lane blocks that :func:`count_le16` reads. ESCA's dense draw
    then finds its topic by one count over the whole row."""
    if not (isinstance(pf, types.Array) and pf.dtype == types.float32 and isinstance(bsum, types.Array)
            and bsum.dtype == types.float32 and isinstance(nrow, types.Integer)):
        return None
    sig = types.float32(pf, bsum, types.intp)

    def codegen(context, builder, sig, args):
        a_pf, a_bsum, a_nrow = args
        f32 = ir.FloatType()
        v8f = ir.VectorType(f32, 8)
        i32 = ir.IntType(32)
        pf_p = context.make_array(sig.args[0])(context, builder, a_pf).data
        bs_p = context.make_array(sig.args[1])(context, builder, a_bsum).data
        bs = builder.load(builder.bitcast(bs_p, v8f.as_pointer()), align=4)
        base = ir.Constant(v8f, [0.0] * 8)
        b = ir.Constant(f32, 0.0)
        for j in range(7):
            b = builder.fadd(b, builder.extract_element(bs, i32(j)))
            base = builder.insert_element(base, b, i32(j + 1))
        total = builder.fadd(b, builder.extract_element(bs, i32(7)))
        # two rows per 16-lane store: count_le16 then loads what one store wrote (a load spanning two narrower
        # stores waits for them to reach the cache instead of taking their data from the store buffer)
        v16f = ir.VectorType(f32, 16)
        i64 = ir.IntType(64)
        both = _shuffle(builder, base, base, list(range(16)))
        with cgutils.for_range(builder, builder.ashr(a_nrow, i64(1))) as loop:
            o = builder.mul(loop.index, i64(16))
            lo = builder.load(builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()), align=4)
            hi = builder.load(builder.bitcast(builder.gep(pf_p, [builder.add(o, i64(8))]), v8f.as_pointer()), align=4)
            builder.store(builder.fadd(_shuffle(builder, lo, hi, list(range(16))), both),
                          builder.bitcast(builder.gep(pf_p, [o]), v16f.as_pointer()), align=4)
        odd = builder.icmp_signed("!=", builder.and_(a_nrow, i64(1)), i64(0))
        with builder.if_then(odd):
            # the last row with the row after it (+0.0 added to that one: unchanged, but for the sign of a zero)
            o = builder.mul(builder.sub(a_nrow, i64(1)), i64(8))
            lo = builder.load(builder.bitcast(builder.gep(pf_p, [o]), v8f.as_pointer()), align=4)
            hi = builder.load(builder.bitcast(builder.gep(pf_p, [builder.add(o, i64(8))]), v8f.as_pointer()), align=4)
            half = _shuffle(builder, base, ir.Constant(v8f, [0.0] * 8), list(range(16)))
            builder.store(builder.fadd(_shuffle(builder, lo, hi, list(range(16))), half),
                          builder.bitcast(builder.gep(pf_p, [o]), v16f.as_pointer()), align=4)
        return total

    return sig, codegen


@intrinsic
def count_le16(typingctx, pf, nvec, x):
    """The number of the first ``16 nvec`` entries of the float32 array ``pf`` (1-D contiguous) that are <= ``x``
    (float32; a NaN ``x`` counts nothing; NaN entries do not count), in 16-lane vector code: per 16 entries one
    load, one compare and one integer vector subtraction of its all-ones lanes from sixteen running counts, summed
    across the lanes once at the end. No data-dependent branch. Over running sums that do not decrease
    (:func:`stack_columns8`) this is the index of the first entry above ``x``: an inverse CDF in one pass.

    The lane counts stay in a vector register: with 16-lane compares into a mask register (AVX-512) a mask's
    population count costs about as much, but on 8-lane hardware (AVX2) a 16-bit mask is packed from two 8-lane
    compares by four shuffles per 16 entries, a chain that took about a sixth of an ESCA sweep on the Wikipedia
    sample at K = 100 (``perf`` samples in the sweep's code, AMD Zen 3)."""
    if not (isinstance(pf, types.Array) and pf.dtype == types.float32 and isinstance(nvec, types.Integer)
            and x == types.float32):
        return None
    sig = types.intp(pf, types.intp, types.float32)

    def codegen(context, builder, sig, args):
        a_pf, a_n, a_x = args
        f32 = ir.FloatType()
        v16f = ir.VectorType(f32, 16)
        i32 = ir.IntType(32)
        v16i = ir.VectorType(i32, 16)
        i64 = ir.IntType(64)
        pf_p = context.make_array(sig.args[0])(context, builder, a_pf).data
        xv = ir.Constant(v16f, ir.Undefined)
        for q in range(16):
            xv = builder.insert_element(xv, a_x, i32(q))
        acc = cgutils.alloca_once_value(builder, ir.Constant(v16i, [0] * 16))
        with cgutils.for_range(builder, a_n) as loop:
            ptr = builder.bitcast(builder.gep(pf_p, [builder.mul(loop.index, i64(16))]), v16f.as_pointer())
            le = builder.sext(builder.fcmp_ordered("<=", builder.load(ptr, align=4), xv), v16i)  # -1 where counted
            builder.store(builder.sub(builder.load(acc), le), acc)
        # the sixteen lane counts summed by halving (integer sums: any order gives the same count)
        s = builder.load(acc)
        for width in (8, 4, 2, 1):
            s = builder.add(_shuffle(builder, s, s, list(range(width))),
                            _shuffle(builder, s, s, list(range(width, 2 * width))))
        return builder.zext(builder.extract_element(s, i32(0)), i64)

    return sig, codegen


def _dot_types_ok(w, rows, x, n) -> bool:
    """Typing of :func:`dot8` / :func:`dot8x4`: a C-contiguous 2-D float32 / float64 ``w``, integer row
    indices and count, a C-contiguous 1-D float64 ``x``."""
    return (isinstance(w, types.Array) and w.ndim == 2 and w.layout == "C"
            and w.dtype in (types.float32, types.float64)
            and all(isinstance(t, types.Integer) for t in (*rows, n))
            and isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C" and x.dtype == types.float64)


def _dot_rows(context, builder, w_ty, a_w, rows, x_ty, a_x, n, reduce):
    """The code of :func:`dot8` for the rows ``rows`` of ``w`` at once: one <8 x double> fused multiply-add
    per row and block of eight (each load of ``x`` serving every row), ``reduce(builder, lane_sums)`` -> the
    rows' combined lane sums (float64 scalars), then each row's last ``n % 8`` products by scalar fused
    multiply-adds. Returns the rows' dot products."""
    f64 = ir.DoubleType()
    v8d = ir.VectorType(f64, 8)
    narrow = w_ty.dtype == types.float32
    v8w = ir.VectorType(ir.FloatType() if narrow else f64, 8)
    warr = context.make_array(w_ty)(context, builder, a_w)
    row_len = builder.extract_value(warr.shape, 1)
    w_ps = [builder.gep(warr.data, [builder.mul(r, row_len)]) for r in rows]
    x_p = context.make_array(x_ty)(context, builder, a_x).data
    eight = ir.Constant(n.type, 8)
    nvec = builder.sdiv(n, eight)
    fma8 = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v8d, [v8d, v8d, v8d]), "llvm.fma.v8f64")
    fma1 = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f64, [f64, f64, f64]), "llvm.fma.f64")
    accs = [cgutils.alloca_once_value(builder, ir.Constant(v8d, [0.0] * 8)) for _ in rows]
    with cgutils.for_range(builder, nvec) as loop:
        o = builder.mul(loop.index, eight)
        xv = builder.load(builder.bitcast(builder.gep(x_p, [o]), v8d.as_pointer()), align=8)
        for w_p, acc in zip(w_ps, accs):
            wv = builder.load(builder.bitcast(builder.gep(w_p, [o]), v8w.as_pointer()), align=4 if narrow else 8)
            if narrow:
                wv = builder.fpext(wv, v8d)
            builder.store(builder.call(fma8, [wv, xv, builder.load(acc)]), acc)
    totals = reduce(builder, [builder.load(acc) for acc in accs])
    out = []
    for w_p, total in zip(w_ps, totals):
        res = cgutils.alloca_once_value(builder, total)
        with cgutils.for_range(builder, builder.sub(n, builder.mul(nvec, eight))) as loop:
            j = builder.add(builder.mul(nvec, eight), loop.index)
            wj = builder.load(builder.gep(w_p, [j]))
            if narrow:
                wj = builder.fpext(wj, f64)
            builder.store(builder.call(fma1, [wj, builder.load(builder.gep(x_p, [j])), builder.load(res)]), res)
        out.append(builder.load(res))
    return out


def _shuffle(builder, a, b, idx):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(ir.IntType(32), len(idx)), idx))


def _halve_one(builder, sums):
    """One row's lane sums combined by halving: ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))."""
    (a,) = sums
    h4 = builder.fadd(_shuffle(builder, a, a, [0, 1, 2, 3]), _shuffle(builder, a, a, [4, 5, 6, 7]))
    h2 = builder.fadd(_shuffle(builder, h4, h4, [0, 1]), _shuffle(builder, h4, h4, [2, 3]))
    i32 = ir.IntType(32)
    return [builder.fadd(builder.extract_element(h2, i32(0)), builder.extract_element(h2, i32(1)))]


def _halve_four(builder, sums):
    """Four rows' lane sums combined by the additions of :func:`_halve_one`, in its order, with shared shuffles."""
    A, B, C, D = sums
    # halves: [A0+A4, A1+A5, A2+A6, A3+A7, B0+B4, ...]
    lo, hi = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
    ab = builder.fadd(_shuffle(builder, A, B, lo), _shuffle(builder, A, B, hi))
    cd = builder.fadd(_shuffle(builder, C, D, lo), _shuffle(builder, C, D, hi))
    # quarters: [(A0+A4)+(A2+A6), (A1+A5)+(A3+A7), B.., B.., C.., C.., D.., D..]
    q = builder.fadd(_shuffle(builder, ab, cd, [0, 1, 4, 5, 8, 9, 12, 13]),
                     _shuffle(builder, ab, cd, [2, 3, 6, 7, 10, 11, 14, 15]))
    tot = builder.fadd(_shuffle(builder, q, q, [0, 2, 4, 6]), _shuffle(builder, q, q, [1, 3, 5, 7]))
    i32 = ir.IntType(32)
    return [builder.extract_element(tot, i32(r)) for r in range(4)]


@intrinsic
def dot8(typingctx, w, i, x, n):
    """``sum_j w[i, j] x[j]`` over ``j < n`` (``w`` a C-contiguous 2-D float32 or float64 array, ``i`` a row
    index inside it, ``x`` a contiguous 1-D float64 array; the caller guarantees ``n`` elements in both),
    summed in one fixed order in float64: eight lane sums ``s_l = sum_r w[i, 8 r + l] x[8 r + l]`` (r in
    order, one <8 x double> fused multiply-add per r), combined by halving as
    ``((s_0 + s_4) + (s_2 + s_6)) + ((s_1 + s_5) + (s_3 + s_7))``, then the last ``n % 8`` products added
    one by one (fused multiply-adds). Every operation is rounded as written (``llvm.fma``, no fastmath
    flags), so the result is the same bits wherever the call is compiled or inlined; a reduction written
    as a Python loop vectorises only under fastmath reassociation, which depends on the surrounding code.
    Reading the row through its index creates no array view (no reference counting in the loop)."""
    if not _dot_types_ok(w, (i,), x, n):
        return None
    sig = types.float64(w, types.intp, x, types.intp)

    def codegen(context, builder, sig, args):
        a_w, a_i, a_x, a_n = args
        return _dot_rows(context, builder, sig.args[0], a_w, [a_i], sig.args[2], a_x, a_n, _halve_one)[0]

    return sig, codegen


@intrinsic
def dot8x4(typingctx, w, i0, i1, i2, i3, x, n):
    """``(dot8(w, i0, x, n), dot8(w, i1, x, n), dot8(w, i2, x, n), dot8(w, i3, x, n))``, the same bits,
    computed together: each <8 x double> load of ``x`` serves four rows and the four lane-sum vectors are
    reduced with shared shuffles (the same additions, in the same order, as :func:`dot8`'s)."""
    if not _dot_types_ok(w, (i0, i1, i2, i3), x, n):
        return None
    sig = types.UniTuple(types.float64, 4)(w, types.intp, types.intp, types.intp, types.intp, x, types.intp)

    def codegen(context, builder, sig, args):
        out = _dot_rows(context, builder, sig.args[0], args[0], list(args[1:5]), sig.args[5], args[5], args[6],
                        _halve_four)
        return context.make_tuple(builder, sig.return_type, out)

    return sig, codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` for float64 values with one rounding (``llvm.fma.f64``: the FMA instruction where the
    CPU has one, libm's ``fma`` otherwise), the same bits wherever it is compiled, unlike a ``contract``
    fastmath flag, which lets the compiler fuse or not."""
    if not all(isinstance(t, types.Float) for t in (a, b, c)):
        return None
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, sig, args):
        d = ir.DoubleType()
        f = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]), "llvm.fma.f64")
        return builder.call(f, list(args))

    return sig, codegen


def _lanes8x4(context, builder, sig, args, weighted):
    """The code of :func:`matvec_lanes8x4` (``weighted`` False) and :func:`weighted_outer_lanes8x4` (True)."""
    if weighted:
        a_a, a_f, a_d, a_out, a_i0, a_nrows, a_s0, a_n = args
        a_b, a_j0, a_add = a_a, ir.IntType(64)(0), None
        ty_a, ty_b, ty_o = sig.args[0], sig.args[0], sig.args[3]
    else:
        a_a, a_b, a_out, a_i0, a_nrows, a_s0, a_j0, a_n, a_add = args
        ty_a, ty_b, ty_o = sig.args[0], sig.args[1], sig.args[2]
    f64 = ir.DoubleType()
    v8d = ir.VectorType(f64, 8)
    i64 = ir.IntType(64)
    i32 = ir.IntType(32)
    arr_a = context.make_array(ty_a)(context, builder, a_a)
    arr_b = context.make_array(ty_b)(context, builder, a_b)
    arr_o = context.make_array(ty_o)(context, builder, a_out)
    len_a = builder.extract_value(arr_a.shape, 1)
    len_b = builder.extract_value(arr_b.shape, 1)
    len_o = builder.extract_value(arr_o.shape, 1)
    last = builder.sub(a_nrows, i64(1))
    zero = ir.Constant(v8d, [0.0] * 8)
    mask0 = ir.Constant(ir.VectorType(i32, 8), [0] * 8)

    def splat(x):
        return builder.shuffle_vector(builder.insert_element(zero, x, i32(0)), zero, mask0)

    cols, outs, accs = [], [], []
    for r in range(4):  # rows beyond nrows repeat the last one (read, never stored)
        rr = builder.select(builder.icmp_signed("<", i64(r), a_nrows), i64(r), last)
        cols.append(builder.add(a_i0, rr))
        op = builder.gep(arr_o.data, [builder.add(builder.mul(builder.add(a_i0, rr), len_o), a_s0)])
        outs.append(builder.bitcast(op, v8d.as_pointer()))
        accs.append(cgutils.alloca_once_value(builder, zero))
    if a_add is not None:
        flag = a_add if a_add.type.width == 1 else builder.icmp_unsigned("!=", a_add, ir.Constant(a_add.type, 0))
        with builder.if_then(flag):
            for r in range(4):
                builder.store(builder.load(outs[r], align=8), accs[r])
    if weighted:
        f_p = context.make_array(sig.args[1])(context, builder, a_f).data
        d_p = context.make_array(sig.args[2])(context, builder, a_d).data
    with cgutils.for_range(builder, a_n) as loop:
        j = builder.add(a_j0, loop.index)
        bp = builder.gep(arr_b.data, [builder.add(builder.mul(j, len_b), a_s0)])
        bv = builder.load(builder.bitcast(bp, v8d.as_pointer()), align=8)
        arow = builder.mul(j, len_a)
        if weighted:
            fv = splat(builder.load(builder.gep(f_p, [j])))
            dv = splat(builder.load(builder.gep(d_p, [j])))
        for r in range(4):
            xv = splat(builder.load(builder.gep(arr_a.data, [builder.add(arow, cols[r])])))
            term = builder.fmul(xv, bv)
            if weighted:
                term = builder.fdiv(builder.fmul(term, fv), dv)
            builder.store(builder.fadd(builder.load(accs[r]), term), accs[r])
    for r in range(4):
        with builder.if_then(builder.icmp_signed("<", i64(r), a_nrows)):
            builder.store(builder.load(accs[r]), outs[r], align=8)
    return context.get_dummy_value()


def _c2d(t) -> bool:
    return isinstance(t, types.Array) and t.ndim == 2 and t.layout == "C" and t.dtype == types.float64


@intrinsic
def matvec_lanes8x4(typingctx, a, b, out, i0, nrows, s0, j0, n, add):
    """``out[i0 + r, s0 + l] (+)= sum_{j0 <= j < j0 + n} a[j, i0 + r] * b[j, s0 + l]`` for the rows r < ``nrows``
    (1 to 4) and the eight columns l < 8: ``a``, ``b`` and ``out`` C-contiguous 2-D float64 arrays; the caller
    guarantees the indices (rows ``j0 .. j0 + n - 1`` of ``a`` and ``b``, columns ``i0 .. i0 + nrows - 1`` of
    ``a``, rows ``i0 ..`` of ``out``, columns ``s0 .. s0 + 7`` of ``b`` and ``out``). Each entry is
    ``start + p_j0 + p_(j0+1) + ...`` (p_j = a[j, i0 + r] b[j, s0 + l]; start = 0, or the entry's value when
    ``add`` is true), added in the order of j with every product and sum rounded (no fused multiply-add): the
    numbers of the scalar loop ``acc += a[j, i] * b[j, s]``, so a sum can be continued over blocks of j. The
    eight columns are one <8 x double> register per row and the four rows' sums stay in registers over the
    whole loop over j (one load of a row of ``b`` serves four rows), where the same loop written in Python
    loads and stores its sums at every j."""
    if not (_c2d(a) and _c2d(b) and _c2d(out) and all(isinstance(t, types.Integer) for t in (i0, nrows, s0, j0, n))
            and isinstance(add, types.Boolean)):
        return None
    sig = types.void(a, b, out, types.intp, types.intp, types.intp, types.intp, types.intp, types.boolean)

    def codegen(context, builder, sig, args):
        return _lanes8x4(context, builder, sig, args, False)

    return sig, codegen


@intrinsic
def weighted_outer_lanes8x4(typingctx, a, f, d, out, i0, nrows, s0, n):
    """``out[i0 + r, s0 + l] = sum_{t < n} ((a[t, i0 + r] * a[t, s0 + l]) * f[t]) / d[t]`` for the rows
    r < ``nrows`` (1 to 4) and the eight columns l < 8, summed from 0 in the order of t with every operation
    rounded as written: the numbers of the scalar loop ``acc += a[t, i] * a[t, s] * f[t] / d[t]``, with the
    partial sums in registers as in :func:`matvec_lanes8x4`. ``a`` and ``out`` C-contiguous 2-D float64, ``f``
    and ``d`` 1-D float64 (contiguous); the caller guarantees the indices (SAM's gradient: the K x K matrix
    sum over samples of theta theta' f / ||beta theta||^2)."""
    if not (_c2d(a) and _c2d(out) and all(isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64
                                          and t.layout == "C" for t in (f, d))
            and all(isinstance(t, types.Integer) for t in (i0, nrows, s0, n))):
        return None
    sig = types.void(a, f, d, out, types.intp, types.intp, types.intp, types.intp)

    def codegen(context, builder, sig, args):
        return _lanes8x4(context, builder, sig, args, True)

    return sig, codegen
