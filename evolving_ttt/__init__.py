"""The code of the book *Evolving Tic-Tac-Toe Players: Four Systems Rebuilt and Measured*, one module per concern.

The chapters import it through ``ttt_helpers`` (``import ttt_helpers as th``); tests and other code import the
modules directly. Imports run one way, from the bottom up:

* ``game``, ``records``: the game and its base-3 board index; the book's JSON data files and its run cache;
* ``drawing``, ``statistics``, ``perfect``: pictures, confidence limits and perfect play;
* ``outcomes``: players as tables of move probabilities, and exact results of any two of them;
* the systems, one subpackage each: ``fogel`` (Fogel 1993, the spine, chapters 2 to 13), ``al_khateeb``
  (chapters 15 and 16), ``ling_lam`` (chapters 17 and 18) and ``mohammadi`` (chapters 19 and 20); the later
  systems may use Fogel's rule base and run helpers, and no system imports another otherwise;
* ``arena``: every player of the book on the same exact yardsticks (chapter 21);
* ``play`` and ``static_board``: the play widget and the page's board (chapter 14); ``cli``: the command line.
"""
