"""Al-Khateeb (2012): a co-evolved 9-5-3-1 board evaluator (chapters 15 and 16).

``evaluator`` holds the readable system (the network, the one-ply player, self-adaptive mutation and
the round robin, chapter 15); ``engine`` the batched engine that runs all 20 runs together, the record
of an experiment and the files (chapter 15); ``results`` the exact yardsticks and the paper's tables
(chapter 16).
"""
