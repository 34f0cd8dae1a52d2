"""The players' tables of the page's board (evolving_ttt.static_board): exact round trip, and current."""

import json

import numpy as np
import pytest

from evolving_ttt.arena import catalogue, reference_players
from evolving_ttt.game import O, X
from evolving_ttt.outcomes import random_policy
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.static_board import SCRIPT, decode_side, encode_side, players_script


@pytest.fixture(scope="module")
def players():
    return catalogue()


@pytest.mark.slow
def test_every_side_of_every_player_round_trips_exactly(players):
    for player in players:
        for mark in (X, O):
            epsilon, codes = encode_side(player.policy(mark), mark, player.name)
            assert len(codes) == 2 * 3**9 or (codes.startswith("w") and epsilon == 0.0)  # the weighted form
            assert np.allclose(decode_side(epsilon, codes, mark), player.policy(mark), rtol=0, atol=1e-12)


def test_the_epsilons_are_the_random_moves_of_the_players():
    by_name = {p.name: p for p in reference_players()}
    assert encode_side(by_name["rule base"].x_policy, X)[0] == pytest.approx(0.1)
    assert encode_side(by_name["perfect, 10% random"].o_policy, O)[0] == pytest.approx(0.1)
    assert encode_side(by_name["perfect"].x_policy, X)[0] == 0.0


def test_a_policy_outside_the_form_is_refused():
    table = random_policy(X)
    table[0] = [1 / np.pi, 1 - 1 / np.pi, 0, 0, 0, 0, 0, 0, 0]  # two levels, and no whole numbers over one denominator
    odd = ArenaPlayer("odd", "test", "", table, random_policy(O))
    with pytest.raises(ValueError, match="odd as X does not fit the static board's form"):
        players_script([odd])
    with pytest.raises(ValueError, match="codes must hold 39366 characters"):
        decode_side(0.0, "00", X)


@pytest.mark.slow
def test_the_committed_script_is_what_the_players_give_now(players):
    # The play chapter writes book/_static/ttt_players.js; a change to any player must be written out again.
    assert SCRIPT.read_text() == players_script(players)
    data = json.loads(SCRIPT.read_text().split("= ", 1)[1].rstrip(";\n"))
    assert [entry["name"] for entry in data] == [p.name for p in players]
