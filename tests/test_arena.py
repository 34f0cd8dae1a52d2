"""The arena's players and yardsticks (evolving_ttt.arena), checked against the chapters' own functions."""

import numpy as np
import pytest

from evolving_ttt import arena
from evolving_ttt.fogel.exact import exact_score
from evolving_ttt.fogel.network import load_network, network_move
from evolving_ttt.fogel.system import fogel_champion
from evolving_ttt.fogel_score import best_response
from evolving_ttt.game import O, X, board_from_string, is_game_over, legal_moves, play, player_to_move
from evolving_ttt.outcomes import outcome_probabilities, random_policy
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.records import DATA
from evolving_ttt.systems import registered_systems


@pytest.fixture(scope="module")
def references():
    return {p.name: p for p in arena.reference_players()}


@pytest.fixture(scope="module")
def champion_player():
    return fogel_champion()


@pytest.mark.slow
def test_the_best_response_player_reaches_the_ceiling_of_chapter_10(references):
    row = arena.measure(references["best response"])
    assert np.isclose(row.protocol_score, best_response().ceiling, rtol=0, atol=1e-9)
    assert row.can_lose == {"X": False, "O": False}


def test_the_fogel_champion_in_the_arena_is_the_network_of_the_book(champion_player):
    network, _ = load_network(DATA / "champion.json")
    row = arena.measure(champion_player)
    assert np.isclose(row.protocol_score, exact_score(network)[0], rtol=0, atol=1e-9)
    assert row.can_lose == {"X": False, "O": True}  # chapter 11's audit as X; as O the swap loses (chapter 26)
    assert row.mistakes["X"] == (2, 76)
    assert champion_player.deterministic


def test_results_against_references_are_exact_and_seen_from_the_player(references):
    perfect, random = references["perfect"], references["random"]
    row = arena.measure(perfect)
    assert np.allclose([row.results["perfect"]["X"], row.results["perfect"]["O"]], [[0, 1, 0], [0, 1, 0]])
    wins, draws, losses = arena.results_as(random, perfect, O)
    assert losses > 0.9 and wins == 0
    as_x = arena.results_as(random, random, X)
    assert np.allclose(arena.results_as(random, random, O), as_x[::-1])
    assert np.isclose(sum(as_x), 1.0)


def test_the_round_robin_is_every_pairing_and_its_points_add_up(references, champion_player):
    players = [references["random"], references["perfect"], champion_player]
    outcomes = arena.round_robin(players)
    assert outcomes.shape == (3, 3, 3)
    for i, a in enumerate(players):
        for j, b in enumerate(players):
            assert np.allclose(outcomes[i, j], outcome_probabilities(a.x_policy, b.o_policy))
    points = arena.round_robin_points(outcomes)
    # Over all pairings, one point per game is shared out: the mean of the players' points is 1/2.
    assert np.isclose(points.mean(), 0.5)
    assert points[1] == points.max()  # the perfect player never loses


def test_round_robin_points_by_hand():
    outcomes = np.zeros((2, 2, 3))
    outcomes[0, 1] = [1, 0, 0]  # player 0 as X beats player 1
    outcomes[1, 0] = [0, 1, 0]  # player 1 as X draws with player 0
    assert np.allclose(arena.round_robin_points(outcomes), [0.75, 0.25])


def test_moves_of_deterministic_and_stochastic_players(references, champion_player):
    board = board_from_string("XX. .O. ...")
    network, _ = load_network(DATA / "champion.json")
    assert champion_player.move(board) == network_move(network, board, O) == 7  # it fails to block (chapter 26)
    random = references["random"]
    assert not random.deterministic
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        random.move(board)
    moves = {random.move(board, np.random.default_rng(seed)) for seed in range(40)}
    assert moves == {2, 3, 5, 6, 7, 8}
    with pytest.raises(ValueError, match="game is over"):
        champion_player.move(board_from_string("XXX OO. ..."))


def test_a_bad_table_is_refused_when_the_player_is_made():
    bad = random_policy(X)
    bad[0] = 0
    with pytest.raises(ValueError, match="broken's x_policy must give each board"):
        ArenaPlayer("broken", "test", "", bad, random_policy(O))
    with pytest.raises(ValueError, match="player must be an ArenaPlayer"):
        arena.measure("perfect")


def test_every_player_of_the_catalogue_moves_legally_everywhere_it_can_be_asked():
    from evolving_ttt.game import board_tables
    from evolving_ttt.outcomes import boards_to_move

    tables = board_tables()
    players = arena.catalogue()
    saved = {player.name for system in registered_systems() for player in system.book_players()}
    assert len({p.name for p in players}) == len(players) >= len(arena.reference_players()) + len(saved)
    assert saved <= {p.name for p in players}  # every registered system's saved players, and names told apart
    for player in players:
        for mark in (X, O):
            table = player.policy(mark)
            rows = boards_to_move(mark)
            assert np.allclose(table[rows].sum(axis=1), 1.0), player.name
            assert not np.any(table[~tables.empty] > 0), player.name  # never on an occupied square
            assert not np.any(np.delete(table, rows, axis=0)), player.name  # nothing where it is not its turn


def test_the_random_players_exact_rates_against_itself_match_a_seeded_sample(references):
    from evolving_ttt.outcomes import sample_games

    random = references["random"]
    exact = arena.results_as(random, random, X)
    results, _ = sample_games(random.x_policy, random.o_policy, np.random.default_rng(21), 5000)
    sampled = np.array([np.mean(results == X), np.mean(results == 0), np.mean(results == O)])
    assert np.all(np.abs(sampled - exact) < 4 * np.sqrt(exact * (1 - exact) / 5000))


def test_the_system_players_are_their_saved_files():
    by_name = {p.name: p for p in arena.catalogue()}
    from evolving_ttt.al_khateeb.engine import load_evaluator
    from evolving_ttt.al_khateeb.evaluator import one_ply_move
    from evolving_ttt.ling_lam.experiment import load_trained_network
    from evolving_ttt.mohammadi.programs import program_move
    from evolving_ttt.mohammadi.series import DEFAULT_PROGRAM, load_program

    weights, _, _ = load_evaluator(DATA / "al_khateeb_ttt.json")
    network, _ = load_trained_network(DATA / "ling_lam_nndtf.json")
    program, _ = load_program(DEFAULT_PROGRAM)
    rng = np.random.default_rng(3)
    for _ in range(30):  # random positions of random games
        board = np.zeros(9, dtype=np.int8)
        for _ in range(int(rng.integers(0, 7))):
            if is_game_over(board):
                break
            board = play(board, int(rng.choice(legal_moves(board))))
        if is_game_over(board):
            continue
        mark = player_to_move(board)
        assert by_name["Al-Khateeb TTT"].move(board) == one_ply_move(weights, board)
        assert by_name["Ling-Lam NNDTF"].move(board) == network.move(board)
        assert by_name["Mohammadi champion"].move(board) == program_move(program, board, mark)
        explanation = by_name["Mohammadi champion"].explain(board, mark)
        assert f"(square {explanation.move})" in explanation.text or "no PLAY-AT" in explanation.text


def test_head_to_head_reads_both_sides_of_a_round_robin_and_names_a_missing_player():
    from evolving_ttt.arena import head_to_head, reference_players, round_robin

    players = [p for p in reference_players() if p.name in ("perfect", "random")]
    names = [p.name for p in players]
    outcomes = round_robin(players)
    as_x, as_o, mean = head_to_head(outcomes, names, "perfect", "random")
    p, r = names.index("perfect"), names.index("random")
    assert as_x == outcomes[p, r, 0] + 0.5 * outcomes[p, r, 1] and as_o == outcomes[r, p, 2] + 0.5 * outcomes[r, p, 1]
    assert mean == (as_x + as_o) / 2 and 0.8 < as_o < as_x <= 1
    # the other side of the same games: the two players' points add up to one per game
    assert np.allclose(np.add(head_to_head(outcomes, names, "random", "perfect")[:2], (as_o, as_x)), 1)
    with pytest.raises(ValueError, match="no player named 'champion' in the round robin; the players are"):
        head_to_head(outcomes, names, "champion", "random")
