"""Portable numerics: elementary functions and products that give the same bits on every processor (chapter 9).

numpy picks the code of ``np.exp``, ``np.tanh``, ``np.log`` and ``**`` by processor (its own SIMD loops on
machines with AVX2 or AVX-512, glibc's libm with or without FMA elsewhere), and a matrix product goes to the
BLAS kernel OpenBLAS picks for the processor. Each is accurate, but they differ in the last bit, and one bit
changes a comparison in a tournament and sends a run elsewhere. The functions here are built only from
operations that IEEE 754 rounds exactly and that no processor changes: add, subtract, multiply, divide,
comparisons, conversions between whole numbers and doubles, table look-ups, and powers of two built from their
bits. They are compiled with numba without ``fastmath``, so the compiler may neither reorder a sum nor fuse a
product and a sum into one FMA: a wider vector unit runs the same operations on more numbers at once, with the
same results.

- :func:`exp`: the table method (Tang, 1989): ``exp(x) = 2^(k/128) exp(r)`` with ``|r| <= ln 2 / 256``, the 128
  powers ``2^(j/128)`` held as a double plus its tail, and a degree-5 polynomial for ``exp(r) - 1``;
- :func:`tanh`, from the same table: an odd Taylor series for ``|x| < 0.25``, and ``(E - 1) / (E + 1)`` with
  ``E = exp(2 |x|)`` carried as a double-double and the quotient corrected by one exact remainder above it;
- for compiled loops, the kernels of one number (:func:`exp_scalar`, :func:`tanh_scalar`, ...), and two that give
  their bits for less: :func:`exp_nonpositive` for arguments in ``[-700, 0]``, and :func:`tanh_in_place` for a
  layer of numbers, which computes for each only the way of the two that it needs;
- :func:`sigmoid`: ``1 / (1 + exp(-x))`` with the portable :func:`exp`;
- :func:`log` (fdlibm's method) and :func:`power` for bases in ``[0, 1]`` (the non-uniform mutation of Ling and
  Lam's GA), with ``y log x`` carried as a double-double; :func:`scalar_power` for one number, in decimal;
- :func:`fixed_matmul`: a matrix product that adds its terms in a fixed order (term 0, then 1, ...), never
  through BLAS;
- :func:`same_bits_count`: how many numbers of two arrays are the same bits, for the checks that saved results are
  what the code computes.

Accuracy, checked by ``tests/test_numerics.py`` against 30-digit references: every result of :func:`exp`,
:func:`tanh` and :func:`log` is within 1 ulp of the correctly rounded value (their errors stay below 0.56, 0.56
and 1.25 ulp); :func:`power` too for exponents up to 1 (the GA's), and within 3 ulp up to 3. Another test walks
the package's source and fails on a processor-dispatched function in any module that feeds a run's result.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

NUMERICS = "portable-1"
"""Which numerics made a result: recorded in every sweep database, so that a sweep made with other functions
(numpy's, before this module; or a later version of it) is never resumed with these, nor mixed with their results."""

TABLE_BITS = 7
TABLE_SIZE = 1 << TABLE_BITS
"""The table method's 128 entries: ``2^(j/128)`` for ``j = 0 .. 127``."""


def _power_table() -> tuple[np.ndarray, np.ndarray]:
    """``2^(j/128)``, j = 0..127, as a double (head) and the double nearest the rest (tail), from 60-digit decimals."""
    with localcontext() as context:
        context.prec = 60
        ln2 = Decimal(2).ln()
        exact = [(ln2 * j / TABLE_SIZE).exp() for j in range(TABLE_SIZE)]
        heads = [float(value) for value in exact]
        tails = [float(value - Decimal(head)) for value, head in zip(exact, heads, strict=True)]
    return np.array(heads), np.array(tails)


POWER_HEAD, POWER_TAIL = _power_table()
"""``2^(j/128) = POWER_HEAD[j] + POWER_TAIL[j]`` to about 107 bits; computed in decimal, the same on every machine."""


def _reduction_constants() -> tuple[float, float, float]:
    """128 / ln 2, and ln 2 / 128 split into a 32-bit head (exact times any whole k below 2^21) and a tail."""
    with localcontext() as context:
        context.prec = 60
        step = Decimal(2).ln() / TABLE_SIZE
        inverse = float(1 / step)
        mantissa, exponent = math.frexp(float(step))
        head = math.ldexp(math.floor(math.ldexp(mantissa, 32)), exponent - 32)
        tail = float(step - Decimal(head))
    return inverse, head, tail


INV_LN2_SCALED, LN2_SCALED_HEAD, LN2_SCALED_TAIL = _reduction_constants()
"""128 / ln 2 rounded to a double; ln 2 / 128 as a 32-bit head plus a tail, so that ``k * head`` is exact."""
ROUNDING_SHIFT = 6755399441055744.0
"""1.5 * 2^52: ``(t + shift) - shift`` is ``t`` rounded to the nearest whole number (ties to even), for |t| < 2^51."""
EXP_LOWEST, EXP_HIGHEST = -746.0, 710.0
"""Below -746 exp is 0 and above 710 it overflows: arguments are clipped to these before the reduction."""
EXP_COEFFICIENTS = (1 / 120, 1 / 24, 1 / 6, 1 / 2)
"""Taylor coefficients of ``(exp(r) - 1 - r) / r^2``, highest first; for ``|r| <= ln 2 / 256`` the truncation
error is below ``r^6 / 720 < 2^-60``."""

JIT_OPTIONS = {"nogil": True, "cache": True, "error_model": "numpy"}
"""How every compiled kernel of the package is compiled (here and in the engines that call these functions)."""
# Never fastmath: no reordering, no FMA contraction. The numpy error model lets a division be compiled without a
# check for zero (no divisor here can be zero), and a loop without such a check can run on vector registers.


@numba.njit(inline="always", **JIT_OPTIONS)
def _exp_reduced(x: float, x_tail: float) -> tuple[float, float, int]:
    """``exp(x + x_tail) = 2^e (head + small)`` for x in [:data:`EXP_LOWEST`, :data:`EXP_HIGHEST`] (not NaN):
    the reduction, the polynomial and the table of :func:`_exp_parts`."""
    k = (x * INV_LN2_SCALED + ROUNDING_SHIFT) - ROUNDING_SHIFT
    r = (x - k * LN2_SCALED_HEAD) - k * LN2_SCALED_TAIL + x_tail  # x - k * head is exact
    p = r * EXP_COEFFICIENTS[0]
    p = (p + EXP_COEFFICIENTS[1]) * r
    p = (p + EXP_COEFFICIENTS[2]) * r
    p = (p + EXP_COEFFICIENTS[3]) * r
    p = p * r + r  # exp(r) - 1
    whole = np.int64(k)
    index = whole & (TABLE_SIZE - 1)
    head = POWER_HEAD[index]
    return head, head * p + POWER_TAIL[index], whole >> TABLE_BITS


@numba.njit(**JIT_OPTIONS)
def _exp_parts(x: float, x_tail: float) -> tuple[float, float, int]:
    """``exp(x + x_tail) = 2^e (head + small)``, ``head`` a table entry and ``|small| < 2^-7 head`` (a NaN x gives NaN).

    ``x_tail`` is a small correction added to the reduced argument, for arguments carried as a double-double.
    """
    clipped = min(max(x, EXP_LOWEST), EXP_HIGHEST) if x == x else 0.0  # a NaN must not index the tables
    head, small, e = _exp_reduced(clipped, x_tail)
    if x != x:
        small = x
    return head, small, e


@intrinsic
def _double_from_bits(typing_context, bits):
    """The double whose IEEE 754 bit pattern is the int64 ``bits`` (a reinterpretation, not a conversion)."""

    def codegen(context, builder, signature, arguments):
        return builder.bitcast(arguments[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@numba.njit(**JIT_OPTIONS)
def _power_of_two(n: int) -> float:
    """``2^n`` for ``-1022 <= n <= 1023``, built from its bits (exponent field ``n + 1023``, no table to gather)."""
    return _double_from_bits((n + 1023) << 52)


@numba.njit(**JIT_OPTIONS)
def _scale(value: float, e: int) -> float:
    """``value * 2^e`` in two exact steps, rounded once at the end (into the subnormal range, or to 0 or inf).

    ``e`` comes from an argument clipped to ``[-746, 710]``, so that both halves are normal powers of two.
    """
    half = e >> 1
    return value * _power_of_two(half) * _power_of_two(e - half)


@numba.njit(**JIT_OPTIONS)
def exp_scalar(x: float) -> float:
    """``e^x`` for one double: the kernel of :func:`exp`."""
    head, small, e = _exp_parts(x, 0.0)
    return _scale(head + small, e)


EXP_NORMAL_LOWEST = -700.0
"""From here to 0, ``e^x`` and every step of :func:`exp_scalar` are normal numbers (``e^-700`` is about
``2^-1010``)."""


@numba.njit(inline="always", **JIT_OPTIONS)
def exp_nonpositive(x: float) -> float:
    """:func:`exp_scalar` for ``EXP_NORMAL_LOWEST <= x <= 0``, with the same bits: the clipping and the NaN guard
    left out, and ``2^e`` applied in one step (:func:`_scale`'s two steps are both exact there, so one is too)."""
    head, small, e = _exp_reduced(x, 0.0)
    return (head + small) * _power_of_two(e)


@numba.njit(**JIT_OPTIONS)
def sigmoid_scalar(x: float) -> float:
    """``1 / (1 + e^-x)`` for one double: the kernel of :func:`sigmoid`."""
    return 1.0 / (1.0 + exp_scalar(-x))


TANH_SERIES_LIMIT = 0.25
"""Below this |x|, :func:`tanh` sums its odd Taylor series; above it, ``(E - 1) / (E + 1)``."""
TANH_ONE = 22.0
"""From this |x| on, tanh(x) rounds to +-1 (1 - tanh(22) < 2^-63)."""


def _tanh_series_coefficients() -> tuple[float, ...]:
    """Coefficients c_n of ``tanh(x) = x + x^3 (c_1 + c_2 x^2 + ...)``, from the Bernoulli numbers, as exact fractions.

    Fourteen terms: at ``|x| = 0.25`` the first one left out is below ``2^-60`` of the sum.
    """
    bernoulli = [Fraction(1)]
    for m in range(1, 32):
        bernoulli.append(-sum(math.comb(m + 1, j) * bernoulli[j] for j in range(m)) / (m + 1))
    # tanh x = sum over n of 2^(2n) (2^(2n) - 1) B_2n x^(2n - 1) / (2n)!
    return tuple(float(Fraction(4**n * (4**n - 1)) * bernoulli[2 * n] / math.factorial(2 * n)) for n in range(2, 16))


TANH_COEFFICIENTS = np.array(_tanh_series_coefficients())
"""``tanh(x) = x + x^3 (TANH_COEFFICIENTS[0] + TANH_COEFFICIENTS[1] x^2 + ...)``: -1/3, 2/15, -17/315, ..."""
SPLITTER = 134217729.0
"""2^27 + 1, Veltkamp's constant: splits a double into two halves of 26 bits whose products are exact."""


@numba.njit(**JIT_OPTIONS)
def two_sum(a: float, b: float) -> tuple[float, float]:
    """Knuth's error-free sum: ``a + b = s + t`` exactly, ``s`` the rounded sum (any magnitudes)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@numba.njit(**JIT_OPTIONS)
def two_product(a: float, b: float) -> tuple[float, float]:
    """Dekker's error-free product without FMA: ``a b = p + e`` exactly, ``p`` the rounded product.

    Exact while no step overflows or underflows (``|a|, |b|`` below about ``2^995``, the error above the
    subnormal range).
    """
    p = a * b
    c = a * SPLITTER
    a_high = c - (c - a)
    a_low = a - a_high
    c = b * SPLITTER
    b_high = c - (c - b)
    b_low = b - b_high
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


@numba.njit(inline="always", **JIT_OPTIONS)
def _tanh_series(x: float) -> float:
    """The odd Taylor series of tanh: what :func:`tanh_scalar` gives for ``|x| <`` :data:`TANH_SERIES_LIMIT`."""
    squared = x * x
    total = TANH_COEFFICIENTS[-1]
    for n in range(TANH_COEFFICIENTS.size - 2, -1, -1):
        total = total * squared + TANH_COEFFICIENTS[n]
    return x if x == 0 else total * squared * x + x  # x keeps the sign of -0.0


@numba.njit(inline="always", **JIT_OPTIONS)
def _tanh_beyond_series(x: float) -> float:
    """tanh at ``|x| >=`` :data:`TANH_SERIES_LIMIT` (or a NaN): ``(E - 1) / (E + 1)`` with ``E = exp(2 |x|)`` and the
    sign of x, from :data:`TANH_ONE` on +-1 (a NaN gives itself)."""
    a = abs(x)
    head, small, e = _exp_parts(a + a, 0.0)
    high, low = two_sum(_scale(head, e), _scale(small, e))  # E = exp(2a) = high + low, |low| <= ulp(high) / 2
    numerator, numerator_low = two_sum(high, -1.0)
    denominator, denominator_low = two_sum(high, 1.0)
    q = numerator / denominator
    p, p_error = two_product(q, denominator)  # q * denominator = p + p_error exactly
    remainder = ((numerator - p) - p_error + (numerator_low + low)) - q * (denominator_low + low)
    quotient = q + remainder / denominator
    quotient = -quotient if x < 0 else quotient
    saturated = x if x != x else (-1.0 if x < 0 else 1.0)  # |x| >= 22, or NaN
    return quotient if a < TANH_ONE else saturated


@numba.njit(inline="always", **JIT_OPTIONS)
def tanh_scalar(x: float) -> float:
    """The hyperbolic tangent of one double: the kernel of :func:`tanh`.

    Both ways are computed and the result picked without a branch, and the function is inlined where it is called,
    so that a loop over many numbers runs on vector registers (the same operations on each number: the same bits).
    """
    series, beyond = _tanh_series(x), _tanh_beyond_series(x)
    return series if abs(x) < TANH_SERIES_LIMIT else beyond


@numba.njit(inline="always", **JIT_OPTIONS)
def tanh_in_place(values: np.ndarray, places: np.ndarray, far_values: np.ndarray) -> None:
    """``values[k] = tanh_scalar(values[k])`` for every number of a 1-D array, in place, with the same bits.

    :func:`tanh_scalar` computes both of its ways for every number; here each number gets only the way it needs.
    The numbers at or beyond :data:`TANH_SERIES_LIMIT` (and NaN) are gathered, their places into ``places`` (int64)
    and their tanh into ``far_values``, both scratch space at least as long as ``values``; then the series alone
    runs over every number, and the gathered ones are put back. Each of these loops runs on vector registers. The
    series costs about a sixth of the other way, so a layer of small sums, as a trained network's, costs less than
    a sixth of :func:`tanh_scalar`. When more than half of the numbers are far, each is computed whole, as
    :func:`tanh_scalar` does.
    """
    far = 0
    for k in range(values.size):  # without a branch: a near number's place is overwritten by the next one
        places[far] = k
        far += 0 if abs(values[k]) < TANH_SERIES_LIMIT else 1  # a NaN counts as far
    if 2 * far > values.size:
        for k in range(values.size):
            values[k] = tanh_scalar(values[k])
        return
    for m in range(far):
        far_values[m] = _tanh_beyond_series(values[places[m]])
    for k in range(values.size):
        values[k] = _tanh_series(values[k])
    for m in range(far):
        values[places[m]] = far_values[m]


# fdlibm's log (Sun Microsystems, 1993): log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f).
LN2_HEAD = 6.93147180369123816490e-01
"""ln 2 to 32 bits (fdlibm's ln2_hi): times any exponent of a double it is exact."""
LN2_TAIL = 1.90821492927058770002e-10
"""ln 2 minus :data:`LN2_HEAD` (fdlibm's ln2_lo)."""
LOG_COEFFICIENTS = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)
"""fdlibm's Lg1 to Lg7: ``R(z)`` on ``[0, 0.1716]``, a minimax fit of ``(log((1 + s)/(1 - s)) - 2 s) / s``."""
SQRT_HALF = 0.7071067811865476


@intrinsic
def _bits_from_double(typing_context, value):
    """The IEEE 754 bit pattern of a double, as an int64 (a reinterpretation, not a conversion)."""

    def codegen(context, builder, signature, arguments):
        return builder.bitcast(arguments[0], ir.IntType(64))

    return types.int64(types.float64), codegen


SUBNORMAL_SCALE = 2.0**54
"""Subnormal numbers are scaled by this (exactly) before their exponent is read from their bits."""


@numba.njit(**JIT_OPTIONS)
def _frexp(x: float) -> tuple[float, int]:
    """``math.frexp`` for a positive finite double, from its bits and without a branch: mantissa in [0.5, 1)."""
    subnormal = x < 2.2250738585072014e-308
    bits = _bits_from_double(x * SUBNORMAL_SCALE if subnormal else x)
    mantissa = _double_from_bits((bits & 0x000FFFFFFFFFFFFF) | (1022 << 52))
    return mantissa, ((bits >> 52) & 0x7FF) - 1022 - (54 if subnormal else 0)


@numba.njit(**JIT_OPTIONS)
def _log_parts(x: float) -> tuple[float, float]:
    """``log(x) = head + tail`` for a positive finite x: ``head = k * LN2_HEAD`` exact, ``|tail| <= 0.35``."""
    mantissa, exponent = _frexp(x)  # x = mantissa 2^exponent, mantissa in [0.5, 1); exact
    low = mantissa < SQRT_HALF
    mantissa, exponent = (mantissa + mantissa if low else mantissa), (exponent - 1 if low else exponent)
    k = float(exponent)  # the mantissa is now in [sqrt(1/2), sqrt(2))
    f = mantissa - 1.0  # exact
    s = f / (f + 2.0)
    z = s * s
    w = z * z
    c = LOG_COEFFICIENTS
    odd = z * (c[0] + w * (c[2] + w * (c[4] + w * c[6])))
    even = w * (c[1] + w * (c[3] + w * c[5]))
    half_square = 0.5 * f * f
    return k * LN2_HEAD, k * LN2_TAIL - ((half_square - (s * (half_square + odd + even))) - f)


@numba.njit(**JIT_OPTIONS)
def log_scalar(x: float) -> float:
    """The natural logarithm of one double: the kernel of :func:`log`."""
    if not x > 0 or x == math.inf:
        return -math.inf if x == 0 else (x if x == math.inf else math.nan)
    head, tail = _log_parts(x)
    return head + tail


@numba.njit(inline="always", **JIT_OPTIONS)
def power_scalar(base: float, exponent: float) -> float:
    """``base ** exponent`` for a base in ``[0, 1]`` and a finite exponent ``>= 0``: the kernel of :func:`power`.

    Without a branch and inlined where it is called, so that a loop over many numbers runs on vector registers.
    """
    head, tail = _log_parts(base if base != 0 else 1.0)
    product, product_error = two_product(exponent, head)
    high, low = two_sum(product, product_error + exponent * tail)
    exp_head, small, e = _exp_parts(high, low)
    zero_base = 1.0 if exponent == 0 else 0.0
    return zero_base if base == 0 else _scale(exp_head + small, e)


@numba.njit(**JIT_OPTIONS)
def _map_exp(x, out):
    for i in range(x.size):
        out[i] = exp_scalar(x[i])


@numba.njit(**JIT_OPTIONS)
def _map_sigmoid(x, out):
    for i in range(x.size):
        out[i] = sigmoid_scalar(x[i])


@numba.njit(**JIT_OPTIONS)
def _map_tanh(x, out):
    for i in range(x.size):
        out[i] = tanh_scalar(x[i])


@numba.njit(**JIT_OPTIONS)
def _map_log(x, out):
    for i in range(x.size):
        out[i] = log_scalar(x[i])


@numba.njit(**JIT_OPTIONS)
def _map_power(base, exponent, out) -> int:
    """``out = base ** exponent`` (1-D, ``exponent`` of length 1 for one exponent throughout); returns 1 if a base is
    outside [0, 1], 2 if an exponent is negative or not finite, else 0 (the checks of :func:`power`, in one pass)."""
    for i in range(base.size):
        if not (base[i] >= 0.0 and base[i] <= 1.0):
            return 1
    for i in range(exponent.size):
        if not (exponent[i] >= 0.0 and exponent[i] < math.inf):
            return 2
    if exponent.size == 1:
        y = exponent[0]
        for i in range(base.size):
            out[i] = power_scalar(base[i], y)
    else:
        for i in range(base.size):
            out[i] = power_scalar(base[i], exponent[i])
    return 0


def _elementwise(kernel, x) -> np.ndarray:
    """Apply a one-argument kernel to every element; returns a new float64 array of x's shape."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(x.shape)
    kernel(np.ascontiguousarray(x.reshape(-1)), out.reshape(-1))
    return out


def exp(x) -> np.ndarray:
    """``e^x`` elementwise, the same bits on every processor; within 1 ulp of the correctly rounded value.

    0 below about -745.1, ``inf`` above about 709.8, NaN for NaN; subnormal results rounded once.
    """
    return _elementwise(_map_exp, x)


def sigmoid(x) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-x))`` used by every node of Fogel's network (chapter 2)."""
    return _elementwise(_map_sigmoid, x)


def tanh(x) -> np.ndarray:
    """The hyperbolic tangent elementwise, the same bits on every processor; within 1 ulp; NaN for NaN."""
    return _elementwise(_map_tanh, x)


def log(x) -> np.ndarray:
    """The natural logarithm elementwise, the same bits on every processor; within 1 ulp of the correctly rounded
    value. ``-inf`` at 0, NaN below 0 and for NaN, ``inf`` at ``inf``."""
    return _elementwise(_map_log, x)


def power(base, exponent) -> np.ndarray:
    """``base ** exponent`` elementwise for bases in ``[0, 1]`` and exponents ``>= 0``, the same bits everywhere.

    ``exp(y log x)`` with ``y log x`` carried as a double-double (Dekker's product), so that the large
    logarithm of a small base loses no bits. ``0 ** 0`` is 1, as in Python.

    Raises
    ------
    ValueError
        If a base is outside ``[0, 1]`` or an exponent is negative or not finite (NaN included).
    """
    base, exponent = np.asarray(base, dtype=np.float64), np.asarray(exponent, dtype=np.float64)
    if exponent.size != 1 or exponent.ndim > base.ndim:  # one exponent for every base needs no broadcast copy
        base, exponent = np.broadcast_arrays(base, exponent)
    out = np.empty(base.shape)
    found = _map_power(np.ascontiguousarray(base.reshape(-1)), np.ascontiguousarray(exponent.reshape(-1)),
                       out.reshape(-1))  # fmt: skip
    if found == 1:
        raise ValueError("power: every base must lie in [0, 1] (this portable power serves the GA's mutation)")
    if found == 2:
        raise ValueError("power: every exponent must be a finite number >= 0")
    return out


def scalar_power(base: float, exponent: float) -> float:
    """``base ** exponent`` for one number each, computed in 40-digit decimal arithmetic and then rounded.

    Python's ``**`` on floats calls the C library's ``pow``, whose code glibc picks by processor. The decimal
    module is software arithmetic, the same everywhere; its power is correctly rounded in all but rare cases.
    """
    if not (math.isfinite(base) and math.isfinite(exponent)) or base < 0:
        raise ValueError(f"scalar_power: base must be a finite number >= 0 and the exponent finite; "
                         f"got {base!r} and {exponent!r}")  # fmt: skip
    if base == 0:
        return 1.0 if exponent == 0 else (0.0 if exponent > 0 else math.inf)
    with localcontext() as context:
        context.prec = 40
        return float(Decimal(base) ** Decimal(exponent))


@numba.njit(**JIT_OPTIONS)
def _batched_matmul(a, b, out):
    """out[n] = a[n] @ b[n] for 3-D arrays, each entry summed over k = 0, 1, ... in that order."""
    for n in range(a.shape[0]):
        for i in range(a.shape[1]):
            for j in range(b.shape[2]):
                out[n, i, j] = a[n, i, 0] * b[n, 0, j]
            for k in range(1, a.shape[2]):
                factor = a[n, i, k]
                for j in range(b.shape[2]):
                    out[n, i, j] += factor * b[n, k, j]


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array``: numba compiles a kernel once for each mix of writable and read-only arrays."""
    view = array.view()
    view.flags.writeable = False
    return view


def fixed_matmul(a, b) -> np.ndarray:
    """``a @ b`` with each entry summed in a fixed order, term 0 first, never through BLAS.

    Same broadcasting as ``np.matmul``: a 1-D ``b`` is a column (the result drops that axis), a 1-D ``a`` a
    row. Each entry is ``((a0 b0 + a1 b1) + a2 b2) + ...``, so that a row gets the same bits whatever batch it
    is in and whatever the processor.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("fixed_matmul: both operands need at least one dimension, as for np.matmul")
    vector_a, vector_b = a.ndim == 1, b.ndim == 1
    a = a[None, :] if vector_a else a
    b = b[:, None] if vector_b else b
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"fixed_matmul: inner dimensions differ: {a.shape} and {b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    (rows, inner), columns = a.shape[-2:], b.shape[-1]
    count = math.prod(batch)
    a3 = np.ascontiguousarray(np.broadcast_to(a, batch + (rows, inner))).reshape(count, rows, inner)
    b3 = np.ascontiguousarray(np.broadcast_to(b, batch + (inner, columns))).reshape(count, inner, columns)
    out = np.empty((count, rows, columns))
    if inner:  # both operands as read-only views, whether or not they were broadcast: one compiled signature
        _batched_matmul(_read_only(a3), _read_only(b3), out)
    else:
        out[...] = 0.0
    out = out.reshape(batch + (rows, columns))
    if vector_b:
        out = out[..., 0]
    if vector_a:
        out = out[..., 0, :] if not vector_b else out[..., 0]
    return out


def same_bits_count(one, other) -> int:
    """How many elements of two arrays of one shape are the same bits: floats compared as the bits of their float64
    values (so ``-0.0`` differs from ``0.0`` and a NaN equals itself bit for bit), anything else with ``==``."""
    one, other = np.asarray(one), np.asarray(other)
    if one.shape != other.shape:
        raise ValueError(f"same_bits_count: the arrays have shapes {one.shape} and {other.shape}; they must match")
    if one.dtype.kind == "f" or other.dtype.kind == "f":
        one, other = (np.ascontiguousarray(a, dtype=np.float64).view(np.uint64) for a in (one, other))
    return int(np.count_nonzero(one == other))
