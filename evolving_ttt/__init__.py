"""The code of the book *Evolving Tic-Tac-Toe Players: Four Systems Rebuilt and Measured*, one module per concern.

The chapters import it through ``ttt_helpers`` (``import ttt_helpers as th``); tests and other code import the
modules directly. Imports run one way, from the bottom up:

* ``game``, ``records``: the game and its base-3 board index; the book's JSON data files and its run cache;
* ``drawing``, ``statistics``, ``perfect``: pictures, confidence limits and perfect play;
* ``outcomes``: players as tables of move probabilities, and exact results of any two of them;
* the systems, one subpackage each: ``fogel`` (Fogel 1993, the spine, chapters 2 to 13), ``al_khateeb``
  (chapters 14 and 15), ``ling_lam`` (chapters 16 and 17) and ``mohammadi`` (chapters 18 and 19); the later
  systems may use Fogel's rule base and run helpers, and no system imports another otherwise;
* ``arena``: every player of the book on the same exact yardsticks (chapter 24);
* ``play`` and ``static_board``: the play widget and the page's board (chapter 26); ``cli``: the command line.
"""
