"""Fogel (1993): evolutionary programming of 9-H-9 networks against a near-perfect rule base.

One module per chapter's concern, bottom up: ``network`` (chapter 2), ``opponent`` (chapter 3),
``engine`` (the batched games, chapter 9), ``mutation`` (chapter 4), ``selection`` (chapter 5),
``evolution`` (chapters 6 and 7), ``trees`` (chapter 8) and ``exact`` (chapter 10).
"""
