"""Ling and Lam (2011), Sections 3 and 5: the NNDTF, the traditional baseline network, and the fitness (chapter 16).

A network is a flat vector of genes in [-1, 1] (the chromosome the genetic algorithms work on).

* :data:`NNDTF_LAYOUT` names the 114 genes of the 9-8-1 network with double transfer functions;
  :func:`nndtf_output` is the readable one-board version, :func:`nndtf_outputs` the engine (any number of
  networks on any number of boards, compiled in :mod:`evolving_ttt.ling_lam.fused`), equal to it bit for bit.
* :data:`BASELINE_LAYOUT` names the 89 genes of the traditional 9-8-1 network (tanh hidden and output
  units with biases); :func:`baseline_output` is the readable version, :func:`baseline_outputs` the engine.
* :func:`output_squares` turns an output in [-1, 1] into a move: the grid number ``5 + 4 y`` and the
  empty square whose paper grid number (:data:`GRID_NUMBERS`) is closest.
* :class:`TrainingSet` holds the 100 training positions; :func:`fitness` is the paper's equation (31), and
  :class:`NetworkFitness` that fitness of one kind of network, as the function the GAs maximize.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    X,
    board_index,
    board_tables,
    check_count,
    check_instance,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
)
from evolving_ttt.ling_lam.fused import EXPONENT_FLOOR, baseline_kernel, nndtf_kernel
from evolving_ttt.ling_lam.heuristic import heuristic_encoding, heuristic_move, score_table
from evolving_ttt.numerics import exp, tanh

N_INPUTS = 9
N_HIDDEN = 8
HIDDEN_ORDERS = ("simultaneous", "sequential")
"""How the circular dependency of equations (10)-(11) is broken (the paper is silent; chapter 16).

``simultaneous``: every dynamic transfer function takes its mean and spread from its neighbours' *static*
outputs, all hidden neurons at once. ``sequential``: the neurons are computed in order 1 to 8; a neighbour
already computed contributes its output z, one not yet computed its static output.
"""


def _layout(fields: Sequence[tuple[str, int]]) -> dict[str, slice]:
    layout, start = {}, 0
    for name, size in fields:
        layout[name] = slice(start, start + size)
        start += size
    return layout


def nndtf_layout(hidden: int = N_HIDDEN) -> dict[str, slice]:
    """Where each parameter of a 9-``hidden``-1 NNDTF sits in its chromosome (``14 hidden + 2`` genes)."""
    hidden = check_count(hidden, "hidden")
    return _layout([
        ("input_weights", N_INPUTS * hidden),  # v_ij, row-major [input i, hidden j]
        ("static_mean", hidden),  # m_s^j
        ("static_spread", hidden),  # sigma_s^j
        ("mean_link", hidden),  # p_{j+1,j}: the dynamic mean is p_{j+1,j} z_{j+1}
        ("spread_link", hidden),  # p_{j-1,j}: the dynamic spread is p_{j-1,j} z_{j-1}
        ("output_weights", hidden),  # w_j
        ("output_mean", 1),  # m_o
        ("output_spread", 1),  # sigma_o
    ])  # fmt: skip


def baseline_layout(hidden: int = N_HIDDEN) -> dict[str, slice]:
    """Where each parameter of a traditional 9-``hidden``-1 network sits in its chromosome (``11 hidden + 1``)."""
    hidden = check_count(hidden, "hidden")
    return _layout([("input_weights", N_INPUTS * hidden), ("hidden_bias", hidden), ("output_weights", hidden),
                    ("output_bias", 1)])  # fmt: skip


NNDTF_LAYOUT: dict[str, slice] = nndtf_layout()
"""Where each parameter of the paper's 9-8-1 NNDTF sits in its chromosome."""
NNDTF_GENES = 114

BASELINE_LAYOUT: dict[str, slice] = baseline_layout()
"""Where each parameter of the paper's traditional 9-8-1 network sits in its chromosome."""
BASELINE_GENES = 89

LAYOUT_FUNCTIONS = {"nndtf": nndtf_layout, "baseline": baseline_layout}
"""Each kind's layout for a number of hidden neurons (chapter 22 varies the paper's 8)."""


def gene_count(kind: str, hidden: int = N_HIDDEN) -> int:
    """Genes of a ``kind`` network with ``hidden`` hidden neurons: 14 h + 2 (NNDTF) or 11 h + 1 (baseline)."""
    if kind not in LAYOUT_FUNCTIONS:
        raise ValueError(f"kind must be one of {tuple(LAYOUT_FUNCTIONS)}; got {kind!r}")
    hidden = check_count(hidden, "hidden")
    return (14 * hidden + 2) if kind == "nndtf" else (11 * hidden + 1)


def hidden_of(kind: str, n_genes: int) -> int:
    """The hidden neurons of a ``kind`` network of ``n_genes`` genes; ``ValueError`` if no network has that many."""
    check_count(n_genes, "n_genes")
    if kind not in LAYOUT_FUNCTIONS:
        raise ValueError(f"kind must be one of {tuple(LAYOUT_FUNCTIONS)}; got {kind!r}")
    extra, per = (2, 14) if kind == "nndtf" else (1, 11)
    if n_genes < extra + per or (n_genes - extra) % per:
        paper = per * N_HIDDEN + extra
        raise ValueError(f"a {kind} network's genes must have {per} h + {extra} values along the last axis for h >= 1 "
                         f"hidden neurons ({paper} values for the paper's {N_HIDDEN}); got {n_genes}")  # fmt: skip
    return (n_genes - extra) // per


GRID_NUMBERS = np.array([3, 2, 1, 6, 5, 4, 9, 8, 7])
"""The paper's grid number of each square (squares row-major from the top left): 1 to 9 right to left, top down."""
SQUARES_BY_GRID_NUMBER = np.argsort(GRID_NUMBERS)
"""The squares in the order of their grid numbers 1..9."""


def check_genes(genes: np.ndarray, count: int, name: str = "genes") -> np.ndarray:
    """Check that ``genes`` is a float array whose last axis has ``count`` values in [-1, 1]."""
    try:
        genes = np.asarray(genes, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers; got {type(genes).__name__} {genes!r:.60}") from None
    if genes.ndim == 0 or genes.shape[-1] != count:
        raise ValueError(f"{name} must have {count} values along the last axis; got shape {genes.shape}")
    if not np.all((genes >= -1.0) & (genes <= 1.0)):
        raise ValueError(f"{name} must lie in [-1, 1] (the paper's bounds); found values outside or nan")
    return genes


def transfer(f: np.ndarray | float, mean: np.ndarray | float, spread: np.ndarray | float) -> np.ndarray:
    """The paper's transfer function (7), (9) and (16): a Gaussian bell turned into an S from -1 to 1.

    ``exp(-(f - m)^2 / (2 s^2)) - 1`` for ``f <= m`` and ``1 - exp(...)`` above it, that is
    ``sign(f - m) (1 - exp(-(f - m)^2 / (2 s^2)))``. Only ``s^2`` matters, so a negative spread acts as
    its absolute value. At spread 0 (the paper is silent) the function is its limit, the step
    ``sign(f - m)``, with 0 at ``f = m``: there the exponent is ``0 * -inf``, a nan that ``fmin`` turns into 0.
    Written in place on one array, but for the exponential.
    """
    d = np.subtract(f, mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = -0.5 / np.multiply(spread, spread)  # -1 / (2 s^2), -inf at s = 0
        e = np.asarray(d * d)  # a 0-d array for single numbers, so that the steps below can write in place
        e *= factor  # the exponent, <= 0; nan where f = m and s = 0
    np.fmin(e, 0.0, out=e)  # nan -> 0
    # The exponent reaches -1e18 here. Below EXPONENT_FLOOR, 1 - exp is exactly 1 in double precision, so
    # raising such exponents to the floor changes no bit of the result (the engine keeps the same floor).
    np.maximum(e, EXPONENT_FLOOR, out=e)
    e = exp(e)  # the portable exp (evolving_ttt.numerics): the same bits on every processor
    np.subtract(1.0, e, out=e)
    return np.copysign(e, d, out=e)  # the sign of f - m (1 - e is 0 where f = m)


def nndtf_output(genes: np.ndarray, inputs: np.ndarray, order: str = "simultaneous") -> float:
    """Readable NNDTF: the output in [-1, 1] of one network (114 genes) on one encoded board (9 inputs).

    Equations (6)-(16): each hidden neuron's static transfer function of its weighted input sum, then
    the dynamic one whose mean and spread come from its two neighbours (wrapping around), then the output
    neuron. ``order`` chooses how the neighbours' outputs are read (:data:`HIDDEN_ORDERS`).
    """
    hidden = hidden_of("nndtf", np.shape(genes)[-1] if np.ndim(genes) else 0)  # 8 in the paper (chapter 22 varies it)
    genes = check_genes(genes, gene_count("nndtf", hidden))
    if order not in HIDDEN_ORDERS:
        raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {order!r}")
    part = {name: genes[where] for name, where in nndtf_layout(hidden).items()}
    v = part["input_weights"].reshape(N_INPUTS, hidden)
    static = [transfer(sum(inputs[i] * v[i, j] for i in range(N_INPUTS)), part["static_mean"][j],
                       part["static_spread"][j]) for j in range(hidden)]  # fmt: skip
    z = list(static)  # z_j until neuron j is computed: its static output
    source = static if order == "simultaneous" else z
    for j in range(hidden):
        after, before = (j + 1) % hidden, (j - 1) % hidden  # neighbours, wrapping around (10)-(11)
        z[j] = transfer(static[j], part["mean_link"][j] * source[after], part["spread_link"][j] * source[before])
    total = sum(z[j] * part["output_weights"][j] for j in range(hidden))
    return float(transfer(total, part["output_mean"][0], part["output_spread"][0]))


NEXT_NEURON = np.roll(np.arange(N_HIDDEN), -1)
"""Neuron j + 1 for each hidden neuron j (neuron 1 after neuron 8): the source of the dynamic mean (10)."""
PREVIOUS_NEURON = np.roll(np.arange(N_HIDDEN), 1)
"""Neuron j - 1 for each hidden neuron j (neuron 8 before neuron 1): the source of the dynamic spread (11)."""


def _batch(kind: str, genes: np.ndarray, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple, int]:
    """Genes as a C-ordered, writable (B, n) float array, inputs as (P, 9), the batch shape and the hidden neurons."""
    genes, inputs = np.asarray(genes, dtype=float), np.asarray(inputs, dtype=float)
    if inputs.ndim != 2 or inputs.shape[1] != N_INPUTS:
        raise ValueError(f"inputs must be encoded boards (P, {N_INPUTS}); got shape {inputs.shape}")
    hidden = hidden_of(kind, genes.shape[-1] if genes.ndim else 0)  # 8 in the paper
    flat, inputs = np.ascontiguousarray(genes.reshape(-1, genes.shape[-1])), np.ascontiguousarray(inputs)
    # Writable copies of read-only arrays: the kernels only read them, but numba compiles a kernel (and the network
    # it calls, shared with the compiled GA loops, which pass writable rows) once for each mix of the two.
    flat = flat if flat.flags.writeable else flat.copy()
    return flat, inputs if inputs.flags.writeable else inputs.copy(), genes.shape[:-1], hidden


def nndtf_outputs(genes: np.ndarray, inputs: np.ndarray, order: str = "simultaneous") -> np.ndarray:
    """The NNDTF engine: outputs (..., P) of networks (..., 114) on encoded boards (P, 9).

    Each network on each board is computed in one compiled loop (:func:`~evolving_ttt.ling_lam.fused.nndtf_kernel`)
    with exactly the operations of :func:`nndtf_output`, in the same order: the same bits, whatever the batch.
    """
    if order not in HIDDEN_ORDERS:
        raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {order!r}")
    flat, inputs, batch, hidden = _batch("nndtf", genes, inputs)
    out = np.empty((len(flat), len(inputs)))
    nndtf_kernel(flat, inputs, hidden, order == "sequential", out)
    return out.reshape(*batch, len(inputs))


def baseline_output(genes: np.ndarray, inputs: np.ndarray) -> float:
    """Readable traditional network: ``tanh(sum_j w_j tanh(sum_i x_i v_ij + b_j) + b_o)`` on one encoded board."""
    hidden = hidden_of("baseline", np.shape(genes)[-1] if np.ndim(genes) else 0)  # 8 in the paper
    genes = check_genes(genes, gene_count("baseline", hidden))
    part = {name: genes[where] for name, where in baseline_layout(hidden).items()}
    v = part["input_weights"].reshape(N_INPUTS, hidden)
    hidden_outputs = [tanh(sum(inputs[i] * v[i, j] for i in range(N_INPUTS)) + part["hidden_bias"][j])
                      for j in range(hidden)]  # fmt: skip
    total = sum(part["output_weights"][j] * hidden_outputs[j] for j in range(hidden))
    return float(tanh(total + part["output_bias"][0]))


def baseline_outputs(genes: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """The baseline engine: outputs (..., P) of traditional networks (..., 89) on encoded boards (P, 9).

    One compiled loop (:func:`~evolving_ttt.ling_lam.fused.baseline_kernel`), bit for bit :func:`baseline_output`.
    """
    flat, inputs, batch, hidden = _batch("baseline", genes, inputs)
    out = np.empty((len(flat), len(inputs)))
    baseline_kernel(flat, inputs, hidden, out)
    return out.reshape(*batch, len(inputs))


def move_tables(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For boards (P, 9): the empty squares in grid-number order (P, 9), and the rank each output picks (P, 17).

    The output y in [-1, 1] is stretched linearly onto the grid numbers, ``5 + 4 y``, and the empty square
    whose grid number is closest is played. Between two empty squares adjacent in grid-number order, with
    grid numbers g < h, the move changes where ``5 + 4 y`` passes their midpoint, at ``y = ((g + h)/2 - 5)/4``,
    a multiple of 1/8. So the move depends only on ``ceil(8 y)``, an integer from -8 to 8 (8 y is exact):
    column ``ceil(8 y) + 8`` of the second table holds the rank, in grid-number order, of the empty square
    played. An output exactly on a midpoint is equally close to two grid numbers; the lower grid number
    wins (the paper is silent on ties). The first table's rows are padded by repeating the last empty square.
    """
    boards = np.asarray(boards)
    ranked = np.zeros((len(boards), 9), dtype=np.int64)
    rank_by_step = np.zeros((len(boards), 17), dtype=np.int64)
    steps = np.arange(-8, 9)  # the values of ceil(8 y)
    for p, board in enumerate(boards):
        empty = [int(s) for s in SQUARES_BY_GRID_NUMBER if board[s] == EMPTY]
        if not empty:
            raise ValueError("a board without an empty square has no move")
        ranked[p] = empty + [empty[-1]] * (9 - len(empty))
        grid = GRID_NUMBERS[empty]
        eighths = grid[:-1] + grid[1:] - 10  # 8 y at each midpoint: 8 ((g + h)/2 - 5)/4
        # y > midpoint exactly when ceil(8 y) > 8 * midpoint, both integers
        rank_by_step[p] = (steps[:, None] > eighths[None, :]).sum(axis=1)
    return ranked, rank_by_step


def output_steps(outputs: np.ndarray) -> np.ndarray:
    """``ceil(8 y) + 8``, the column of :func:`move_tables`' second table, for outputs y.

    The networks' outputs lie in [-1, 1]; anything beyond is clipped to the ends (the closest grid number
    of an output above 1 is that of 1), so every output gets a column.
    """
    steps = np.multiply(8.0, outputs, out=np.empty(np.shape(outputs)))  # an array even for a single output
    np.ceil(steps, out=steps)
    np.clip(steps, -8, 8, out=steps)
    return steps.astype(np.intp) + 8


def output_squares(outputs: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """The moves of outputs (..., P) on boards (P, 9): the empty square whose grid number is closest to ``5 + 4 y``."""
    ranked, rank_by_step = move_tables(boards)
    rows = np.arange(len(ranked))
    return ranked[rows, rank_by_step[rows, output_steps(outputs)]]


NETWORK_KINDS = ("nndtf", "baseline")


def ling_lam_outputs(kind: str, genes: np.ndarray, inputs: np.ndarray, order: str = "simultaneous") -> np.ndarray:
    """Outputs of NNDTFs (``kind="nndtf"``) or baseline networks (``"baseline"``) on encoded boards."""
    if kind == "nndtf":
        return nndtf_outputs(genes, inputs, order)
    if kind == "baseline":
        return baseline_outputs(genes, inputs)
    raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {kind!r}")


def ling_lam_player(kind: str, genes: np.ndarray, order: str = "simultaneous") -> Callable[[np.ndarray], int]:
    """A player (board -> square) for either side: O sees the board with the colours swapped (X = 1 is itself)."""
    if kind not in NETWORK_KINDS:
        raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {kind!r}")
    if order not in HIDDEN_ORDERS:
        raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {order!r}")
    genes = check_genes(genes, gene_count(kind, hidden_of(kind, np.shape(genes)[-1] if np.ndim(genes) else 0)))

    def move(board: np.ndarray) -> int:
        board = np.asarray(board)
        mark = player_to_move(board)
        own = board * mark  # the colour swap: the mover is X
        output = ling_lam_outputs(kind, genes, heuristic_encoding(own[None]), order)
        return int(output_squares(output, own[None])[0])

    return move


@dataclass(frozen=True)
class TrainingSet:
    """The training positions of equation (31), all with X to move.

    Attributes
    ----------
    boards
        (P, 9) int8 boards.
    inputs
        (P, 9) the boards in the heuristic's encoding (the networks' inputs).
    scores
        (P, 9) int64 heuristic scores of every square (0 on occupied squares).
    best_total
        The sum over the positions of the best square's score (the denominator of (31)).
    score_by_step
        (P, 17): the score of the square each output step ``ceil(8 y) + 8`` plays (see :func:`move_tables`),
        so that the fitness of an output is one lookup.
    """

    boards: np.ndarray
    inputs: np.ndarray
    scores: np.ndarray
    best_total: int
    score_by_step: np.ndarray

    @classmethod
    def from_boards(cls, boards: np.ndarray) -> TrainingSet:
        boards = np.asarray(boards, dtype=np.int8)
        if boards.ndim != 2 or boards.shape[1] != 9 or len(boards) == 0:
            raise ValueError(f"training boards must be an array (P, 9) with P >= 1; got shape {boards.shape}")
        for board in boards:
            if is_game_over(board) or player_to_move(board) != X:
                raise ValueError("every training board must be unfinished with X to move")
        scores = score_table(X)[board_index(boards)]
        ranked, rank_by_step = move_tables(boards)
        score_by_step = np.take_along_axis(scores, np.take_along_axis(ranked, rank_by_step, axis=1), axis=1)
        return cls(boards, heuristic_encoding(boards), scores, int(scores.max(axis=1).sum()), score_by_step)


TRAINING_SOURCES = ("random games", "noisy heuristic games", "uniform positions", "quiet games")
QUIET_SCORE = 6**6
"""A position is quiet (non-tactical) when the heuristic's best square scores below this: no win to take, no
two O's to block (chapter 22)."""
NOISY_HEURISTIC_RANDOM_MOVES = 0.5
"""In ``"noisy heuristic games"``, the chance that a move is uniformly random rather than the heuristic's."""


def training_positions(seed: int = 2011, count: int = 100, source: str = "random games") -> TrainingSet:
    """``count`` distinct positions with X to move and at least two empty squares, from seeded games.

    The paper only says the 100 patterns were obtained with the heuristic (chapter 16). ``source``:

    * ``"random games"`` (our choice): both sides move uniformly at random; every position with X to move
      (and a choice to make) is collected in order of play until ``count`` distinct ones are found;
    * ``"noisy heuristic games"``: both sides play the heuristic (O through the colour swap), each move
      being uniformly random instead with probability 1/2. (With the heuristic alone, X meets only 80
      distinct positions against a random O, too few for 100.)
    * ``"uniform positions"`` (chapter 22): ``count`` of the 2,201 positions of :func:`all_x_positions`, drawn
      uniformly without replacement (all of them for ``count=2201``), so that every position weighs the same
      instead of as often as random games meet it;
    * ``"quiet games"`` (chapter 22): as ``"random games"``, but only positions where the heuristic's best
      square scores below :data:`QUIET_SCORE`, with no win to take and no line of two O's to block.
    """
    count = check_count(count, "count")
    check_count(seed, "seed", 0)
    if source not in TRAINING_SOURCES:
        raise ValueError(f"source must be one of {TRAINING_SOURCES}; got {source!r}")
    rng = np.random.default_rng(seed)
    if source == "uniform positions":
        every = all_x_positions().boards
        if count > len(every):
            raise ValueError(f"there are only {len(every)} positions with X to move; count must be at most that")
        return TrainingSet.from_boards(every[np.sort(rng.permutation(len(every))[:count])])
    best_scores = score_table(X).max(axis=1) if source == "quiet games" else None
    found: dict[int, np.ndarray] = {}
    for _ in range(100_000):
        board = np.zeros(9, dtype=np.int8)
        while not is_game_over(board):
            moves = legal_moves(board)
            quiet = best_scores is None or best_scores[board_index(board)] < QUIET_SCORE
            if player_to_move(board) == X and len(moves) >= 2 and quiet:
                found.setdefault(int(board_index(board)), board.copy())
                if len(found) == count:
                    return TrainingSet.from_boards(np.array(list(found.values())))
            noisy = source == "noisy heuristic games" and rng.random() >= NOISY_HEURISTIC_RANDOM_MOVES
            board = play(board, heuristic_move(board) if noisy else moves[rng.integers(len(moves))])
    raise ValueError(f"could not find {count} distinct positions from {source}; ask for fewer")


def fitness(outputs: np.ndarray, training: TrainingSet) -> np.ndarray:
    """Equation (31): the heuristic's scores of the chosen squares summed, over the best scores summed; (...,)."""
    check_instance(training, TrainingSet, "training", "a TrainingSet (training_positions makes one)")
    # The speed trick: one flat index into the (P, 17) table instead of a pair of index arrays.
    steps = output_steps(outputs) + np.arange(len(training.boards)) * training.score_by_step.shape[1]
    return training.score_by_step.ravel().take(steps).sum(axis=-1) / training.best_total  # the moves' scores


@dataclass(frozen=True, eq=False)
class NetworkFitness:
    """The fitness (31) of ``kind``'s networks on ``training``, as a function of chromosomes (k, n) -> (k,).

    What the GAs maximize (:func:`evolving_ttt.ling_lam.experiment.fitness_function` makes one). Unlike any other
    function, it tells the engine which networks it scores, so that the compiled GA loops of
    :mod:`evolving_ttt.ling_lam.loops` can score them themselves.
    """

    kind: str
    training: TrainingSet
    order: str = "simultaneous"

    def __post_init__(self) -> None:
        if self.kind not in NETWORK_KINDS:
            raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {self.kind!r}")
        check_instance(self.training, TrainingSet, "training", "a TrainingSet (training_positions makes one)")
        if self.order not in HIDDEN_ORDERS:
            raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {self.order!r}")

    def __call__(self, genes: np.ndarray) -> np.ndarray:
        return fitness(ling_lam_outputs(self.kind, genes, self.training.inputs, self.order), self.training)

def all_x_positions() -> TrainingSet:
    """A :class:`TrainingSet` of every reachable unfinished position with X to move and two or more empty squares.

    Fitness on it measures imitation beyond the 100 training positions.
    """
    tables = board_tables()
    keep = tables.legal & ~tables.over & (tables.to_move == X) & (tables.n_empty >= 2)
    return TrainingSet.from_boards(tables.boards[keep])
