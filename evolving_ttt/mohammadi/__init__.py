"""Mohammadi et al. (2013): genetic programming, fitnessless co-evolution and a human judge (chapters 18 and 19).

* ``programs``: the primitive set (DEAP), the text form, and the lazy interpreters (chapter 18);
* ``coevolution``: variation with DEAP's operators, double games, the tournament chain (chapter 18);
* ``bitsets``: the fast engine, the batched interpreter's move tables from sets of boards held as bits (chapter 18);
* ``judge``: exact results against the perfect player, the rule base and the random player, the
  candidates and the scripted judge (chapter 19);
* ``series``: a series of runs with a judge between them, its record and cache, saved programs (chapter 19);
* ``panel``: the reader as the judge, a session and its ipywidgets panel (chapter 19).
"""
