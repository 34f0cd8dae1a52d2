"""Example systems built with the system kit (:mod:`evolving_ttt.kit`), registered by the chapters that show them."""
