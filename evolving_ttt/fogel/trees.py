"""Fogel (1993): the tree of games of a network against the rule base, Fogel's Figure 3 (chapter 8)."""

from __future__ import annotations

import numpy as np

from evolving_ttt.drawing import GameNode
from evolving_ttt.game import Player, is_game_over, legal_moves, play, winner
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, rule_candidates


def game_tree(player: Player, rules: OpponentRules = PAPER_RULES) -> GameNode:
    """Every game ``player`` (X) can play against the rule base when the rule base never moves at random (chapter 8).

    The branches are O's first replies (all eight, as in the protocol, or the rule squares with
    ``first_reply="rules"``) and, later, every square the rules (b)-(e) allow. The root is the board after
    X's first move.
    """
    board = play(np.zeros(9, dtype=np.int8), player(np.zeros(9, dtype=np.int8)))
    root = GameNode(board, [int(np.flatnonzero(board)[0])])

    def grow(node: GameNode, first: bool) -> None:
        if is_game_over(node.board):
            node.result = winner(node.board)
            return
        replies = (
            legal_moves(node.board) if first and rules.first_reply == "cycle" else rule_candidates(node.board, rules)
        )
        for reply in replies:
            after_o = play(node.board, reply)
            if is_game_over(after_o):
                child = GameNode(after_o, node.moves + [reply])
            else:
                answer = player(after_o)
                child = GameNode(play(after_o, answer), node.moves + [reply, answer])
            node.children.append(child)
            grow(child, False)

    grow(root, True)
    return root
