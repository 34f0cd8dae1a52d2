"""Fogel (1993): the 9-H-9 network, one network and a whole population at once (chapter 2).

Read first: :class:`Network` and :func:`network_move`, the readable network of chapter 2. Then
:class:`Population`, which pads every network to ``MAX_HIDDEN`` hidden slots so that a population is a
handful of regular arrays that one batched matrix product evaluates. The JSON file format of a saved
network (chapter 7) closes the module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolving_ttt.game import EMPTY, Player, X, check_count, check_instance, check_mark, legal_moves, network_input
from evolving_ttt.numerics import fixed_matmul, sigmoid
from evolving_ttt.reading import SWEEP_PROVENANCE, Fields, read_record
from evolving_ttt.records import check_path, check_provenance, json_text, write_checked

MIN_HIDDEN, MAX_HIDDEN = 1, 10
"""Bounds on the number of hidden nodes H (chapter 2)."""

INITIAL_WEIGHT_RANGE = 0.5
"""Initial weights and biases are uniform on [-0.5, 0.5] (chapter 2)."""


@dataclass(frozen=True)
class Network:
    """A 9-H-9 perceptron as in Fogel (1993) (chapter 2).

    Each node computes ``sigmoid(weights @ inputs - bias)``: the bias is *subtracted*, as in the paper.

    Attributes
    ----------
    hidden_weights : (H, 9) array
        Weight from input square ``s`` to hidden node ``j`` is ``hidden_weights[j, s]``.
    hidden_bias : (H,) array
    output_weights : (9, H) array
        Weight from hidden node ``j`` to output square ``s`` is ``output_weights[s, j]``.
    output_bias : (9,) array
    """

    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    output_weights: np.ndarray
    output_bias: np.ndarray

    def __post_init__(self) -> None:
        arrays = {}
        for name in ("hidden_weights", "hidden_bias", "output_weights", "output_bias"):
            array = np.array(getattr(self, name), dtype=float)
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{name} must be finite numbers")
            array.flags.writeable = False
            arrays[name] = array
            object.__setattr__(self, name, array)
        hidden = arrays["hidden_weights"].shape[0] if arrays["hidden_weights"].ndim == 2 else -1
        check_hidden_count(hidden, "hidden_weights.shape[0]")
        expected = {
            "hidden_weights": (hidden, 9),
            "hidden_bias": (hidden,),
            "output_weights": (9, hidden),
            "output_bias": (9,),
        }
        for name, shape in expected.items():
            if arrays[name].shape != shape:
                raise ValueError(f"{name} must have shape {shape} for H={hidden}; got {arrays[name].shape}")

    @property
    def hidden_count(self) -> int:
        """The number of hidden nodes H."""
        return self.hidden_weights.shape[0]


def check_hidden_count(hidden: int, name: str = "hidden") -> int:
    """Raise ``ValueError`` naming ``name`` unless ``hidden`` is an integer from 1 to 10 (chapter 2)."""
    if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or not MIN_HIDDEN <= hidden <= MAX_HIDDEN:
        raise ValueError(
            f"{name} must be a whole number of hidden nodes from {MIN_HIDDEN} to {MAX_HIDDEN}; got {hidden!r}"
        )
    return int(hidden)


def network_preactivations(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> np.ndarray:
    """The nine output nodes' weighted sums minus their biases, before the output sigmoid (chapter 2).

    The network was evolved as X. With ``mark=O`` it sees the board with X and O swapped (its own marks
    as +1), which is how it plays O (chapter 26).
    """
    check_instance(network, Network, "network", "a Network (th.load_network reads one from a file)")
    inputs = check_mark(mark) * network_input(board)
    hidden = sigmoid(fixed_matmul(network.hidden_weights, inputs) - network.hidden_bias)
    return fixed_matmul(network.output_weights, hidden) - network.output_bias


def network_outputs(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> np.ndarray:
    """The nine output strengths of ``network`` for ``board``: sigmoids of the pre-activations (chapter 2)."""
    return sigmoid(network_preactivations(network, board, mark))


def network_move(network: Network, board: Sequence[int] | np.ndarray, mark: int = X) -> int:
    """The empty square with the largest output; ties go to the lowest square index (chapter 2).

    Outputs of occupied squares are ignored, so the move is always legal. ``mark=O`` plays O with the
    board's colours swapped (chapter 26).

    Raises
    ------
    ValueError
        If the game on ``board`` is over (there is no move to make).
    """
    check_instance(network, Network, "network", "a Network (th.load_network reads one from a file)")
    moves = legal_moves(board)
    if not moves:
        raise ValueError("the game is over on this board; the network has no move to make")
    # The sigmoid is increasing, so the largest output has the largest pre-activation. Comparing
    # pre-activations gives the same move without ties that rounding creates when outputs near 1.0.
    strengths = network_preactivations(network, board, mark)
    return moves[int(np.argmax(strengths[moves]))]  # argmax returns the first (lowest) of tied maxima


# --- A whole population at once -------------------------------------------------------------------
# Every network is padded to MAX_HIDDEN hidden slots. An unused slot has zero input weights, zero
# bias and zero output weights: its activation is sigmoid(0) = 0.5, but it reaches no output, so the
# padded network computes exactly what the small one does. Then a population is a handful of
# regular arrays and one batched matrix product evaluates all of it.


@dataclass(frozen=True)
class Population:
    """Many networks padded to 10 hidden slots, stacked along leading batch axes (chapter 2).

    With batch shape ``B`` (for instance ``(n,)`` or ``(trials, n)``):

    Attributes
    ----------
    hidden_weights : B + (10, 9)
    hidden_bias : B + (10,)
    output_weights : B + (9, 10)
    output_bias : B + (9,)
    hidden_count : B, int
        Network ``i`` uses hidden slots ``0 .. hidden_count[i] - 1``; the others are held at zero.
    """

    hidden_weights: np.ndarray
    hidden_bias: np.ndarray
    output_weights: np.ndarray
    output_bias: np.ndarray
    hidden_count: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The batch shape."""
        return self.hidden_count.shape

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> Population:
        """Index or slice the batch axes (the result is again a Population)."""
        return Population(*(np.asarray(a[key]) for a in self.arrays()))

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The five arrays, in field order."""
        return (self.hidden_weights, self.hidden_bias, self.output_weights, self.output_bias, self.hidden_count)

    def reshape(self, *shape: int) -> Population:
        """The same networks with a new batch shape."""
        tails = ((10, 9), (10,), (9, 10), (9,), ())
        return Population(*(a.reshape(*shape, *t) for a, t in zip(self.arrays(), tails, strict=False)))

    def network(self, index) -> Network:
        """Network ``index`` of the batch, unpadded."""
        hidden = int(self.hidden_count[index])
        return Network(
            hidden_weights=self.hidden_weights[index][:hidden],
            hidden_bias=self.hidden_bias[index][:hidden],
            output_weights=self.output_weights[index][:, :hidden],
            output_bias=self.output_bias[index],
        )


def network_player(network: Network) -> Player:
    """Wrap a network as a player of X (chapter 3)."""
    return lambda board: network_move(network, board)


def hidden_slot_mask(hidden_count: np.ndarray) -> np.ndarray:
    """Boolean mask of used hidden slots, shape ``hidden_count.shape + (10,)`` (chapter 2)."""
    counts = np.asarray(hidden_count)
    if counts.dtype.kind not in "iu":
        raise ValueError(f"hidden_count must be whole numbers of hidden nodes; got {hidden_count!r:.60}")
    return np.arange(MAX_HIDDEN) < counts[..., None]


def stack_networks(networks: Iterable[Network]) -> Population:
    """Pad a sequence of networks to 10 hidden slots and stack them into a population (chapter 2)."""
    check_instance(networks, Iterable, "networks", "a sequence of Networks")
    networks = list(networks)
    for network in networks:
        check_instance(network, Network, "networks", "a sequence of Networks")
    n = len(networks)
    population = Population(
        hidden_weights=np.zeros((n, MAX_HIDDEN, 9)),
        hidden_bias=np.zeros((n, MAX_HIDDEN)),
        output_weights=np.zeros((n, 9, MAX_HIDDEN)),
        output_bias=np.zeros((n, 9)),
        hidden_count=np.array([net.hidden_count for net in networks], dtype=np.int64),
    )
    for i, net in enumerate(networks):
        h = net.hidden_count
        population.hidden_weights[i, :h] = net.hidden_weights
        population.hidden_bias[i, :h] = net.hidden_bias
        population.output_weights[i, :, :h] = net.output_weights
        population.output_bias[i] = net.output_bias
    return population


def concatenate_populations(populations: Sequence[Population], axis: int = 0) -> Population:
    """Join populations along a batch axis (negative axes count from the last batch axis) (chapter 2)."""
    check_instance(populations, Sequence, "populations", "a sequence of Populations")
    if not populations or not all(isinstance(p, Population) for p in populations):
        raise ValueError(f"populations must be a non-empty sequence of Populations; got {populations!r:.60}")
    check_count(axis, "axis", minimum=-len(populations[0].shape))
    axis = axis % len(populations[0].shape)
    return Population(
        *(np.concatenate(group, axis=axis) for group in zip(*(p.arrays() for p in populations), strict=False))
    )


def random_population(rng: np.random.Generator, size: int) -> Population:
    """``size`` random networks as in the paper's initial population (chapter 2).

    H is uniform on {1, ..., 10}; every used weight and bias is uniform on [-0.5, 0.5].
    """
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator (np.random.default_rng(seed))")
    size = check_count(size, "size")
    hidden_count = rng.integers(MIN_HIDDEN, MAX_HIDDEN + 1, size=size)
    slots = hidden_slot_mask(hidden_count)  # (size, 10)

    def uniform(shape):
        return rng.uniform(-INITIAL_WEIGHT_RANGE, INITIAL_WEIGHT_RANGE, size=(size, *shape))

    return Population(
        hidden_weights=uniform((MAX_HIDDEN, 9)) * slots[:, :, None],
        hidden_bias=uniform((MAX_HIDDEN,)) * slots,
        output_weights=uniform((9, MAX_HIDDEN)) * slots[:, None, :],
        output_bias=uniform((9,)),
        hidden_count=hidden_count,
    )


def random_network(rng: np.random.Generator) -> Network:
    """One random network of the paper's initial population (chapter 2)."""
    return random_population(rng, 1).network(0)


def population_preactivations(population: Population, boards: np.ndarray) -> np.ndarray:
    """Output pre-activations (weighted sums minus biases, before the sigmoid) for a batch (chapter 2).

    ``boards`` has shape ``population.shape + (games, 9)``: each network gets its own boards. The
    result has the same shape. Two batched matrix products do all the work, each summing its terms in a fixed
    order (:func:`~evolving_ttt.numerics.fixed_matmul`), so that the bits are the same on every processor.
    """
    check_instance(population, Population, "population", "a Population (th.stack_networks makes one from networks)")
    try:
        inputs = np.asarray(boards, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"boards must be an array of boards, shape population.shape + (games, 9); "
                         f"got {boards!r:.60}") from None  # fmt: skip
    if inputs.shape[:-2] != population.shape or inputs.shape[-1:] != (9,):
        raise ValueError(f"boards must have shape {population.shape} + (games, 9); got {inputs.shape}")
    hidden_sums = fixed_matmul(inputs, np.swapaxes(population.hidden_weights, -1, -2))
    hidden = sigmoid(hidden_sums - population.hidden_bias[..., None, :])
    return fixed_matmul(hidden, np.swapaxes(population.output_weights, -1, -2)) - population.output_bias[..., None, :]


def population_outputs(population: Population, boards: np.ndarray) -> np.ndarray:
    """Output strengths for a batch: ``sigmoid`` of :func:`population_preactivations` (chapter 2)."""
    return sigmoid(population_preactivations(population, boards))


def population_moves(population: Population, boards: np.ndarray) -> np.ndarray:
    """Moves of every network on its boards (ties: lowest square), shape ``population.shape + (games,)`` (chapter 2).

    The sigmoid is increasing, so the largest output belongs to the largest pre-activation: the batched
    move skips the output sigmoid (and its ``exp``) and takes the argmax of the pre-activations.
    Boards with no empty square get move -1.
    """
    check_instance(population, Population, "population", "a Population (th.stack_networks makes one from networks)")
    boards = np.asarray(boards)
    scores = np.where(boards == EMPTY, population_preactivations(population, boards), -np.inf)
    moves = np.argmax(scores, axis=-1)
    return np.where(np.any(boards == EMPTY, axis=-1), moves, -1)


def batch_rows(batch: tuple[int, ...], index: np.ndarray) -> np.ndarray:
    """Flat row numbers of the networks at ``index`` (shape ``batch[:-1] + (k,)``) in a batch ``batch`` (chapter 5).

    Network ``j`` of population ``b`` is row ``b * n + j`` of the flattened batch (``n = batch[-1]``).
    """
    if not isinstance(batch, tuple) or not batch or not all(isinstance(n, (int, np.integer)) for n in batch):
        raise ValueError(f"batch must be a batch shape, a tuple of whole numbers; got {batch!r:.60}")
    index = np.asarray(index)
    if index.dtype.kind not in "iu" or index.ndim == 0 or index.shape[:-1] != batch[:-1]:
        raise ValueError(f"index must have shape {batch[:-1]} + (k,); got {index.shape}")
    n = batch[-1]
    return np.arange(0, index[..., 0].size * n, n).reshape(index.shape[:-1] + (1,)) + index


NETWORK_FORMAT = "fogel-ttt-network"
"""The ``format`` field of a saved network file (chapter 7)."""

NETWORK_VERSION = 1
"""The ``version`` of the network file format that this code writes and reads (chapter 7)."""

NETWORK_FIELDS = ("format", "version", "hidden_count", "hidden_weights", "hidden_bias", "output_weights", "output_bias")
"""The fields of a network file; any other field is provenance (chapter 7)."""

NETWORK_PROVENANCE = {
    "counts": ("trial", "generation", *SWEEP_PROVENANCE), "texts": ("description",),
    "settings": {"experiment": None, "settings": None},
}  # fmt: skip
"""The provenance fields of a network file that :func:`load_network` checks when present
(:meth:`~evolving_ttt.reading.Fields.provenance`): those of a champion (chapter 7) and of a sweep's task. The
experiment's settings are checked to be an object only (``FogelSettings.from_dict`` reads them): the settings
live in :mod:`evolving_ttt.fogel.evolution`, which builds on this module."""


def save_network(network: Network, path: str | Path, /, **provenance) -> None:
    """Save a network as human-readable JSON, written whole at exactly ``path`` (chapter 7).

    The file holds ``format``, ``version``, ``hidden_count``, the four weight arrays as nested lists
    (``hidden_weights[j][s]``: input square s to hidden node j; ``output_weights[s][j]``: hidden node j
    to output square s; biases are subtracted), and any keyword arguments given as provenance, for
    instance ``seed``, ``trial``, ``generation`` and ``experiment``. Floats are written with all their
    digits, so loading gives back the same network bit for bit.

    Raises
    ------
    ValueError
        If ``network`` is not a :class:`Network`, a provenance keyword is one of the format's own fields
        (:data:`NETWORK_FIELDS`), or the file would not load (:func:`load_network`): a provenance value that is
        not JSON, NaN, a number too large or nested too deep. Nothing is written then.
    """
    check_instance(network, Network, "network", "a Network")
    path = check_path(path)
    check_provenance(provenance, NETWORK_FIELDS, "a network")
    record = {
        "format": NETWORK_FORMAT,
        "version": NETWORK_VERSION,
        "hidden_count": network.hidden_count,
        "hidden_weights": network.hidden_weights.tolist(),
        "hidden_bias": network.hidden_bias.tolist(),
        "output_weights": network.output_weights.tolist(),
        "output_bias": network.output_bias.tolist(),
        **provenance,
    }
    write_checked(path, json_text(record, path), load_network, "network file")


def load_network(path: str | Path) -> tuple[Network, dict]:
    """Load a network saved by :func:`save_network`; return it with the file's other fields (chapter 7).

    The format (version 1) is a JSON object with ``format`` ``"fogel-ttt-network"``, ``version`` 1,
    ``hidden_count`` (a whole number H from 1 to 10), ``hidden_weights`` (H lists of 9 numbers),
    ``hidden_bias`` (H numbers), ``output_weights`` (9 lists of H numbers) and ``output_bias`` (9 numbers), every
    number a finite JSON number (not a text, not a boolean). Every other field is provenance and is returned
    as it is; the fields the book's savers write are checked when present (:data:`NETWORK_PROVENANCE`).

    Raises
    ------
    ValueError
        Naming the file and the field, if the file cannot be read, is not JSON (or holds NaN, numbers too
        large for a float, nesting deeper than 200), is not a network file of version 1, or a field is missing
        or has the wrong type, shape or values.
    """
    path = check_path(path)
    record = read_record(path, NETWORK_FORMAT, "a network file", NETWORK_VERSION)
    fields = Fields(path, record, "network file")
    fields.integer("version", NETWORK_VERSION, NETWORK_VERSION)  # not true, not 1.0
    hidden = fields.integer("hidden_count", MIN_HIDDEN, MAX_HIDDEN)
    shapes = {"hidden_weights": (hidden, 9), "hidden_bias": (hidden,), "output_weights": (9, hidden),
              "output_bias": (9,)}  # fmt: skip
    network = Network(*(fields.numbers(name, shape) for name, shape in shapes.items()))
    fields.provenance(**NETWORK_PROVENANCE)
    provenance = {k: v for k, v in record.items() if k not in NETWORK_FIELDS}
    return network, provenance
