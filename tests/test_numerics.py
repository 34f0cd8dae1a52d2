"""The portable numerics (evolving_ttt.numerics): accuracy against exact references, special values, the fixed-order
matrix product, and a walk over the package's source for processor-dispatched functions in result paths.

The references are computed in 40-digit decimal arithmetic (Python's ``decimal``, software, the same everywhere)
and rounded once to the nearest double. "Within 1 ulp" means the result is the correctly rounded value or one of
its two neighbours.
"""

import ast
import math
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_ttt import numerics

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evolving_ttt"


def decimal_exp(x: float) -> Decimal:
    with localcontext() as context:
        context.prec = 40
        return Decimal(x).exp()


def decimal_tanh(x: float) -> Decimal:
    with localcontext() as context:
        context.prec = 45 + max(0, -Decimal(x).adjusted()) if x else 45  # e - 1 cancels about -log10|x| digits
        e = (2 * Decimal(x)).exp()
        return (e - 1) / (e + 1)


def decimal_log(x: float) -> Decimal:
    with localcontext() as context:
        context.prec = 40
        return Decimal(x).ln()


def decimal_power(base: float, exponent: float) -> Decimal:
    with localcontext() as context:
        context.prec = 40
        return Decimal(base) ** Decimal(exponent)


def ulp_distance(got: float, exact: Decimal) -> float:
    """How many ulps ``got`` lies from the correctly rounded value of ``exact`` (0 = correctly rounded)."""
    rounded = float(exact)
    if got == rounded:
        return 0.0
    return abs(got - rounded) / math.ulp(rounded)


def worst(function, reference, xs) -> float:
    got = function(np.asarray(xs, dtype=float))
    return max(ulp_distance(float(g), reference(float(x))) for g, x in zip(got, xs, strict=True))


# Dense grids over the ranges the systems use, plus points where the table method switches entries.
EXP_GRID = np.concatenate([np.linspace(-745.0, 709.0, 20_001), np.linspace(-2.0, 2.0, 20_001),
                           np.arange(-200, 201) * (math.log(2) / 256)])  # fmt: skip
TANH_GRID = np.concatenate([np.linspace(-25.0, 25.0, 20_001), np.linspace(-0.3, 0.3, 20_001),
                            np.geomspace(1e-12, 0.25, 2_001), [0.25, np.nextafter(0.25, 0), 22.0, 21.99]])  # fmt: skip
LOG_GRID = np.concatenate([np.geomspace(1e-300, 1e300, 20_001), np.linspace(0.5, 2.0, 20_001)])


def test_exp_is_within_one_ulp_of_the_correctly_rounded_value_on_a_dense_grid():
    assert worst(numerics.exp, decimal_exp, EXP_GRID) <= 1.0


@pytest.mark.slow
def test_tanh_is_within_one_ulp_of_the_correctly_rounded_value_on_a_dense_grid():
    assert worst(numerics.tanh, decimal_tanh, TANH_GRID) <= 1.0


@pytest.mark.slow
def test_log_is_within_one_ulp_of_the_correctly_rounded_value_on_a_dense_grid():
    assert worst(numerics.log, decimal_log, LOG_GRID) <= 1.0


@pytest.mark.slow
def test_most_results_are_correctly_rounded():
    # within 1 ulp is the promise; in fact nearly every result is the correctly rounded one
    for function, reference, grid, share in ((numerics.exp, decimal_exp, EXP_GRID, 0.99),
                                             (numerics.tanh, decimal_tanh, TANH_GRID, 0.99)):  # fmt: skip
        got = function(grid)
        exact = np.array([float(reference(float(x))) for x in grid])
        assert np.mean(got == exact) >= share


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-745.0, max_value=709.0))
def test_exp_within_one_ulp_anywhere(x):
    assert ulp_distance(float(numerics.exp(x)), decimal_exp(x)) <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-40.0, max_value=40.0))
def test_tanh_within_one_ulp_anywhere(x):
    assert ulp_distance(float(numerics.tanh(x)), decimal_tanh(x)) <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1e300))
def test_log_within_one_ulp_anywhere(x):
    assert ulp_distance(float(numerics.log(x)), decimal_log(x)) <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1.0), st.floats(min_value=0.0, max_value=1.0))
def test_power_within_one_ulp_for_the_exponents_of_the_mutation(base, exponent):
    exact = decimal_power(base, exponent)
    if float(exact) >= 2.0**-1022:  # normal results
        assert ulp_distance(float(numerics.power(base, exponent)), exact) <= 1.0


def test_power_within_three_ulp_up_to_exponent_three():
    rng = np.random.default_rng(3)
    bases, exponents = rng.random(3000), rng.random(3000) * 3
    got = numerics.power(bases, exponents)
    assert max(ulp_distance(float(g), decimal_power(b, e)) for g, b, e in zip(got, bases, exponents, strict=True)) <= 3


def test_scalar_power_is_the_correctly_rounded_decimal_power():
    assert numerics.scalar_power(0.5, 5.0) == 0.03125
    assert numerics.scalar_power(0.3, 0.5) == float(decimal_power(0.3, 0.5))
    assert numerics.scalar_power(0.0, 0.0) == 1.0 and numerics.scalar_power(0.0, 2.0) == 0.0
    with pytest.raises(ValueError, match="scalar_power"):
        numerics.scalar_power(-1.0, 0.5)
    with pytest.raises(ValueError, match="scalar_power"):
        numerics.scalar_power(0.5, math.nan)


def test_exp_nonpositive_gives_the_bits_of_exp_on_its_whole_range():
    rng = np.random.default_rng(11)
    grid = np.concatenate([-np.geomspace(1e-300, 700.0, 20_000), rng.uniform(-40.0, 0.0, 20_000),
                           [0.0, -0.0, -40.0, numerics.EXP_NORMAL_LOWEST, -5e-324]])  # fmt: skip
    got = np.array([numerics.exp_nonpositive(float(x)) for x in grid])
    assert got.view(np.int64).tolist() == numerics.exp(grid).view(np.int64).tolist()


FAR_SPECIALS = [math.nan, math.inf, -math.inf, 0.25, -0.25, 22.0, -30.0]
NEAR_SPECIALS = [0.0, -0.0, np.nextafter(0.25, 0.0), 1e-300]


@pytest.mark.parametrize("far", [0, 1, 3, 52, 53, 104])
def test_tanh_in_place_gives_the_bits_of_tanh_for_any_share_of_numbers_beyond_the_series(far):
    """tanh_in_place computes the series alone, gathers the numbers beyond it, or computes every number whole (more
    than half beyond: 53 and 104 of 104): each way must give numerics.tanh's bits, special values included."""
    rng = np.random.default_rng(far)
    values = rng.uniform(-0.2499, 0.2499, 104)
    places = rng.permutation(104)
    far_places, near_places = places[:far], places[far:]
    values[far_places] = rng.choice([-1.0, 1.0], far) * rng.uniform(0.25, 30.0, far)
    values[far_places[: len(FAR_SPECIALS)]] = FAR_SPECIALS[: min(far, len(FAR_SPECIALS))]
    values[near_places[: len(NEAR_SPECIALS)]] = NEAR_SPECIALS[: min(104 - far, len(NEAR_SPECIALS))]
    assert np.count_nonzero(~(np.abs(values) < numerics.TANH_SERIES_LIMIT)) == far  # a NaN counts as far
    expected, got = numerics.tanh(values), values.copy()
    numerics.tanh_in_place(got, np.empty(104, dtype=np.int64), np.empty(104))
    assert got.view(np.int64).tolist() == expected.view(np.int64).tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=40))
def test_tanh_in_place_agrees_with_tanh_on_any_numbers(numbers):
    values = np.array(numbers)
    got = values.copy()
    numerics.tanh_in_place(got, np.empty(len(values), dtype=np.int64), np.empty(len(values)))
    assert got.view(np.int64).tolist() == numerics.tanh(values).view(np.int64).tolist()


def test_special_values():
    exp = numerics.exp([math.nan, math.inf, -math.inf, 0.0, -0.0, 710.0, -746.0, 709.78, 1.0])
    assert np.isnan(exp[0]) and exp[1] == math.inf and exp[2] == 0.0 and exp[3] == 1.0 and exp[4] == 1.0
    assert exp[5] == math.inf and exp[6] == 0.0 and np.isfinite(exp[7]) and exp[8] == float(decimal_exp(1.0))
    tanh = numerics.tanh([math.nan, math.inf, -math.inf, 0.0, -0.0, 22.0, -30.0, 1e-300])
    assert np.isnan(tanh[0]) and list(tanh[1:3]) == [1.0, -1.0] and tanh[3] == 0.0
    assert math.copysign(1.0, tanh[4]) == -1.0 and tanh[5] == 1.0 and tanh[6] == -1.0 and tanh[7] == 1e-300
    log = numerics.log([0.0, -1.0, math.inf, math.nan, 1.0, math.e])
    assert log[0] == -math.inf and np.isnan(log[1]) and log[2] == math.inf and np.isnan(log[3]) and log[4] == 0.0
    assert abs(log[5] - 1.0) <= math.ulp(1.0)
    assert list(numerics.power([0.0, 0.0, 1.0, 0.25], [0.0, 2.0, 7.0, 0.5])) == [1.0, 0.0, 1.0, 0.5]


def test_subnormal_exp_results_round_once():
    xs = np.linspace(-745.1, -708.5, 2001)
    got = numerics.exp(xs)
    assert all(ulp_distance(float(g), decimal_exp(float(x))) <= 1.0 for g, x in zip(got, xs, strict=True))


def test_sigmoid_is_one_over_one_plus_the_portable_exp_and_keeps_its_shape():
    x = np.linspace(-50, 50, 1001).reshape(7, 11, 13)
    assert np.array_equal(numerics.sigmoid(x), 1.0 / (1.0 + numerics.exp(-x)))
    assert numerics.sigmoid(0.0).shape == () and float(numerics.sigmoid(0.0)) == 0.5
    assert numerics.exp(np.ones((2, 0, 3))).shape == (2, 0, 3)


def test_power_rejects_what_it_does_not_serve():
    with pytest.raises(ValueError, match=r"base must lie in \[0, 1\]"):
        numerics.power(1.5, 1.0)
    with pytest.raises(ValueError, match="exponent must be a finite number >= 0"):
        numerics.power(0.5, -1.0)
    with pytest.raises(ValueError, match="exponent must be a finite number >= 0"):
        numerics.power(0.5, math.nan)


def test_the_error_free_steps_are_exact():
    rng = np.random.default_rng(11)
    for a, b in rng.normal(size=(500, 2)) * 10.0 ** rng.integers(-20, 20, size=(500, 2)):
        s, t = numerics.two_sum(a, b)
        assert Fraction(s) + Fraction(t) == Fraction(a) + Fraction(b) and s == a + b
        p, e = numerics.two_product(a, b)
        assert Fraction(p) + Fraction(e) == Fraction(a) * Fraction(b) and p == a * b


def test_fixed_matmul_sums_each_entry_in_order_term_zero_first():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(3, 4, 11)), rng.normal(size=(3, 11, 9))
    got = numerics.fixed_matmul(a, b)
    expected = a[..., :, 0, None] * b[..., 0, None, :]
    for k in range(1, 11):
        expected = expected + a[..., :, k, None] * b[..., k, None, :]
    assert np.array_equal(got, expected)


def test_fixed_matmul_broadcasts_like_matmul_and_a_row_keeps_its_bits_in_any_batch():
    rng = np.random.default_rng(6)
    cases = [((5, 9), (9,)), ((9,), (9, 4)), ((9,), (9,)), ((2, 1, 5, 9), (3, 9, 8)), ((7, 9), (4, 9, 8)),
             ((0, 3), (3, 2))]
    for shape_a, shape_b in cases:
        a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
        got = numerics.fixed_matmul(a, b)
        assert got.shape == np.matmul(a, b).shape
        assert np.allclose(got, np.matmul(a, b), rtol=1e-13, atol=1e-13)
    a, b = rng.normal(size=(1000, 11)), rng.normal(size=(11, 9))
    whole = numerics.fixed_matmul(a, b)
    assert all(np.array_equal(numerics.fixed_matmul(a[i], b), whole[i]) for i in (0, 17, 999))
    assert np.array_equal(numerics.fixed_matmul(np.zeros((2, 0)), np.zeros((0, 3))), np.zeros((2, 3)))


def test_fixed_matmul_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="inner dimensions differ"):
        numerics.fixed_matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="at least one dimension"):
        numerics.fixed_matmul(np.float64(2.0), np.ones(3))


def test_the_pieces_built_from_bits_are_frexp_and_ldexp():
    rng = np.random.default_rng(11)
    xs = np.concatenate([np.ldexp(rng.uniform(0.5, 1.0, 2000), rng.integers(-1074, 1024, 2000)),
                         [5e-324, 1e-310, 2.2250738585072014e-308, np.nextafter(2.2250738585072014e-308, 0), 1.0,
                          1.7976931348623157e308]])  # fmt: skip
    for x in xs[xs > 0]:
        assert numerics._frexp(float(x)) == math.frexp(float(x))
    for n in (-1022, -539, -1, 0, 1, 512, 1023):
        assert numerics._power_of_two(n) == math.ldexp(1.0, n)
    tiny = np.array([5e-324, 1e-315, 3e-310])  # subnormal logarithms, within 1 ulp
    assert all(ulp_distance(float(numerics.log(x)), decimal_log(float(x))) <= 1.0 for x in tiny)


def test_the_tables_are_what_their_docstrings_say():
    with localcontext() as context:
        context.prec = 60
        for j in (0, 1, 64, 127):
            exact = (Decimal(2).ln() * j / 128).exp()
            assert numerics.POWER_HEAD[j] == float(exact)
            assert abs(Decimal(numerics.POWER_HEAD[j]) + Decimal(numerics.POWER_TAIL[j]) - exact) < Decimal(2) ** -105
        step = Decimal(2).ln() / 128
        assert abs(Decimal(numerics.LN2_SCALED_HEAD) + Decimal(numerics.LN2_SCALED_TAIL) - step) < Decimal(2) ** -92
    mantissa, _ = math.frexp(numerics.LN2_SCALED_HEAD)
    assert math.ldexp(mantissa, 32) == int(math.ldexp(mantissa, 32))  # 32 bits: k * head exact for |k| < 2^21
    assert numerics.TANH_COEFFICIENTS[0] == -1 / 3 and numerics.TANH_COEFFICIENTS[1] == 2 / 15


# ---- The source walk: no processor-dispatched function in a result path ---------------------------------------

DISPATCHED = {
    "geomspace", "logspace",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sinh", "cosh", "sin", "cos", "tan",
    "arctan", "arctan2", "arcsin", "arccos", "power", "float_power", "pow", "matmul", "dot", "vdot", "inner",
    "tensordot", "expit", "logit", "logsumexp", "softmax",
}  # fmt: skip
"""Functions whose bits depend on the processor: numpy's (SIMD dispatch), math's (glibc's libm), scipy's, BLAS."""
CALLERS = {"np", "numpy", "math", "scipy", "special", "linalg"}

NOT_RESULT_PATHS = {
    "evolving_ttt/statistics.py": "confidence limits printed for the reader, rounded to the digits shown",
    "evolving_ttt/tables.py": "summaries printed for the reader (means and intervals), rounded to the digits shown",
    "evolving_ttt/studies.py": "figures and the printed table at a glance",
    "evolving_ttt/drawing.py": "pictures only",
    "evolving_ttt/cli.py": "memory estimates in messages",
}  # fmt: skip
"""Modules whose floating-point results are printed for the reader, never fed back into a run."""

INTEGER_PRODUCTS = ("@ POWERS_OF_3",)
"""``@`` on whole numbers (a board's base-3 index) is exact on every processor."""


def dispatched_calls(path: Path, source: str | None = None) -> list[str]:
    """Each call of a processor-dispatched function in a module's source, as ``path:line: code``."""
    found = []
    source = path.read_text() if source is None else source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in DISPATCHED:
            base = node.value
            name = base.id if isinstance(base, ast.Name) else (base.attr if isinstance(base, ast.Attribute) else "")
            if name in CALLERS or (node.attr in {"dot", "matmul"} and name not in {"numerics"}):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module in {"numpy", "math", "scipy.special"}:
            found += [f"{path.name}:{node.lineno}: from {node.module} import {a.name}"
                      for a in node.names if a.name in DISPATCHED]  # fmt: skip
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            line = ast.get_source_segment(source, node) or ""
            if not any(allowed in line for allowed in INTEGER_PRODUCTS):
                found.append(f"{path.name}:{node.lineno}: {line}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            exponent = node.right
            whole = isinstance(exponent, ast.Constant) and isinstance(exponent.value, int)
            whole_base = isinstance(node.left, ast.Constant) and isinstance(node.left.value, int)
            if not (whole or whole_base):  # x ** 2 is a multiplication, 3 ** digits whole numbers; x ** y calls pow
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def module_paths():
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "numerics.py")


def test_no_result_path_calls_a_processor_dispatched_function():
    offending = []
    for path in module_paths():
        relative = str(path.relative_to(ROOT))
        if relative in NOT_RESULT_PATHS:
            continue
        offending += dispatched_calls(path)
    assert offending == []


def test_the_walk_finds_what_it_looks_for_and_every_exception_still_applies():
    source = "import math\nimport numpy as np\ny = np.exp(1.0) + math.tanh(2.0)\nz = a @ b\nw = x ** y\nv = x ** 2\n" \
        "u = np.dot(a, b)\nt = POWERS_OF_3 @ d\ns = d @ POWERS_OF_3\nfrom numpy import tanh\nr = 3 ** np.arange(9)\n"
    found = dispatched_calls(PACKAGE / "sample.py", source)
    assert sorted(line.split(": ", 1)[1] for line in found) == sorted(
        ["np.exp", "math.tanh", "a @ b", "x ** y", "np.dot", "POWERS_OF_3 @ d", "from numpy import tanh"])
    for relative in NOT_RESULT_PATHS:
        assert (ROOT / relative).exists(), relative


def test_same_bits_count_counts_numbers_that_are_the_same_bits():
    from evolving_ttt.numerics import same_bits_count

    saved = np.array([0.1, -0.0, np.nan, 1.0, 2.5])
    again = np.array([0.1, 0.0, np.nan, np.nextafter(1.0, 2.0), 2.5])
    assert same_bits_count(saved, again) == 3  # 0.1, NaN and 2.5; not -0.0 against 0.0, not one ulp apart
    assert same_bits_count(saved, saved.copy()) == 5
    assert same_bits_count(np.array([True, False]), np.array([True, True])) == 1
    assert same_bits_count(np.array([3, 4]), np.array([3.0, 4.0])) == 2  # whole numbers as their float64 values
    with pytest.raises(ValueError, match=r"shapes \(5,\) and \(4,\)"):
        same_bits_count(saved, again[:4])
