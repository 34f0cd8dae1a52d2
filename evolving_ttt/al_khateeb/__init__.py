"""Al-Khateeb (2012): a co-evolved 9-5-3-1 board evaluator (chapters 14 and 15).

``evaluator`` holds the readable system (the network, the one-ply player, self-adaptive mutation and the round
robin, chapter 14); ``engine`` the batched engine that runs all 20 runs together, the record of an experiment and
the files (chapter 14), with ``one_ply`` its compiled search and games; ``results`` the exact yardsticks and the
paper's tables, and ``bounds`` what no player could score in its Tables 2 and 3 (chapter 15). The robustness study
(chapter 21) adds ``search`` (a deeper minimax search with the evaluator at the leaves, readable and table-wise),
``robust`` (the co-evolution with the study's settings, readable) and ``study`` (its sweeps read back); ``system``
speaks the vocabulary every system shares.
"""
