"""The code of the book *Evolving Tic-Tac-Toe Players*, one module per concern.

The chapters import it through ``ttt_helpers`` (``import ttt_helpers as th``); tests and other code
import the modules directly. Imports run one way, from the bottom up:

* ``game``, ``drawing``, ``statistics``, ``perfect``: the game, pictures, confidence limits and perfect play;
* ``outcomes``: players as tables of move probabilities, and exact results of any two of them;
* ``fogel``: Fogel (1993), the evolved 9-H-9 networks (chapters 2 to 13);
* ``play`` and ``cli``: the play widget and the command line, on top.
"""
