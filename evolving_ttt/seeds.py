"""Seeds: a run's seed checked, and one independent random generator per trial or run spawned from it (chapter 6).

Every system draws its random numbers this way, so that a trial or run gives the same bits whether it runs alone,
beside others or on another machine: :func:`trial_generators` spawns one :class:`numpy.random.Generator` per trial
from the run's seed with numpy's ``SeedSequence``, and :func:`check_seed` refuses a seed a record cannot store.
"""

from __future__ import annotations

import numpy as np

from evolving_ttt.game import check_count

MAX_SEED = 2**63 - 1
"""The largest seed of a run: a run record stores its seed as a 64-bit integer (chapter 6)."""


def check_seed(seed: int, name: str = "seed") -> int:
    """``seed`` as an ``int``, or ``ValueError`` naming ``name`` unless it is a whole number from 0 to
    :data:`MAX_SEED` (chapter 6)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be a whole number >= 0; got {seed!r:.60} (the largest seed is 2**63 - 1)")
    return int(seed)


def trial_generators(seed: int, trials: int) -> list[np.random.Generator]:
    """One independent random generator per trial, spawned from ``seed`` (chapter 6).

    Trial ``t`` draws only from its own generator, so its run is the same whether it is run alone or
    alongside others.
    """
    seed = check_seed(seed)
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(check_count(trials, "trials"))]
