"""Ling and Lam (2011): a move-scoring heuristic imitated by a network with double transfer functions (chapters 16-22).

* ``heuristic``: the move-scoring heuristic of Section 2 and the heuristic as a player;
* ``network``: the NNDTF of Section 3, the traditional baseline network, the move rule and the fitness (31);
* ``ga``: the improved GA of Section 4 and the baseline's traditional GA, readable, one run at a time;
* ``engine``: both GAs for many runs, on the readable lockstep engine or the compiled one;
* ``loops``: the compiled engine's GA iterations, scoring each network only as far as the GA's choice needs;
* ``fused``: the networks in compiled loops, which both engines call;
* ``experiment``: the many-seed runs, the trained networks' files, and games from given positions;
* ``capacity``: what the networks can hold, fitted by a continuous optimizer (chapter 22);
* ``robustness``: the robustness study's sweeps read together, and its verdicts (chapter 22).
"""
