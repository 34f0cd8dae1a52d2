"""The command line: python -m ttt_helpers evolve ... and evaluate ..."""

import json
import math
import re
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from evolving_ttt.cli import main
from evolving_ttt.fogel.evolution import FogelSettings, estimated_memory, evolve, load_run
from evolving_ttt.fogel.exact import exact_score
from evolving_ttt.fogel.mutation import MutationSettings
from evolving_ttt.fogel.network import load_network, network_player
from evolving_ttt.fogel.selection import SelectionSettings
from evolving_ttt.perfect import audit_player
from evolving_ttt.rule_base import OpponentRules

ARRAY_NAMES = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")


def run_cli(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "ttt_helpers", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_evolve_command_writes_a_run_and_a_champion(tmp_path, repo_root):
    out, champion = tmp_path / "run.npz", tmp_path / "champion.json"
    args = ["evolve", "--trials", "2", "--generations", "5", "--parents", "6", "--seed", "3", "--out", str(out),
            "--quiet", "--workers", "1", "--champion", str(champion)]  # fmt: skip
    done = run_cli(args, repo_root)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert f"wrote {out}" in done.stdout and f"wrote {champion}" in done.stdout
    run = load_run(out)
    assert run.best_score.shape == run.mean_score.shape == run.mean_hidden.shape == (2, 5)
    assert run.final_parents.shape == (2, 6)
    assert run.seed == 3 and run.trial_numbers == (0, 1)
    assert run.settings == FogelSettings(parents=6, generations=5, trials=2)
    # the command runs exactly the experiment the library runs
    expected = evolve(run.settings, seed=3)
    assert np.array_equal(run.best_score, expected.best_score)
    assert np.array_equal(run.final_parents.hidden_weights, expected.final_parents.hidden_weights)
    network, provenance = load_network(champion)
    for name in ARRAY_NAMES:
        assert np.array_equal(getattr(network, name), getattr(expected.best_network(0), name))
    assert provenance["seed"] == 3 and provenance["trial"] == 0 and provenance["generation"] == 5
    assert FogelSettings.from_dict(provenance["experiment"]) == run.settings


def test_evolve_command_passes_every_option_through(tmp_path, capsys):
    out = tmp_path / "run.npz"
    code = main(["evolve", "--trials", "1", "--generations", "2", "--parents", "6", "--seed", "0", "--out", str(out),
                   "--quiet", "--workers", "1", "--payoff", "1,-1,0", "--rule-d", "opponent", "--first-reply", "rules",
                   "--strict-selection", "--spread-is", "variance"])  # fmt: skip
    assert code == 0
    assert "1 trial x 2 generations, 6 parents, seed 0, 1 worker(s)" in capsys.readouterr().err
    settings = load_run(out).settings
    assert settings == FogelSettings(
        parents=6, generations=2, trials=1,
        rules=OpponentRules(rule_d_lines="opponent", first_reply="rules"),
        mutation=MutationSettings(spread_is="variance"),
        selection=SelectionSettings(payoff=(1, -1, 0), ties_win=False),
    )  # fmt: skip


BAD_EVOLVE_ARGUMENTS = [
    (["--trials", "-1"], r"argument --trials: expected a whole number >= 0; got '-1'"),
    (["--trials", "two"], r"argument --trials: expected a whole number >= 0; got 'two'"),
    (["--payoff", "1,2"], r"argument --payoff: expected three numbers win,loss,draw such as 1,-10,0; got '1,2'"),
    (["--payoff", "a,b,c"], r"argument --payoff: expected three numbers"),
    (["--payoff", "1,nan,0"], r"argument --payoff: payoff must be three finite numbers"),
    (["--payoff", "1e308,-1e308,0"], r"argument --payoff: payoff must be three numbers from -1e\+06 to 1e\+06"),
    (["--payoff", "1,1,1"], r"argument --payoff: payoff must tell results apart"),
    (["--rule-d", "foo"], r"argument --rule-d: invalid choice: 'foo'"),
    (["--first-reply", "bar"], r"argument --first-reply: invalid choice: 'bar'"),
    (["--spread-is", "sd"], r"argument --spread-is: invalid choice: 'sd'"),
    (["--parents", "0"], r"parents must be a whole number >= 1; got 0"),
    (["--parents", "5"], r"--parents 5: each of the 2 x 5 networks .* compared with 10 others, so --parents must be "
                         r"at least 6"),
    (["--parents", "1"], r"--parents 1: .* --parents must be at least 6"),
    (["--trials", "1" + "0" * 400], r"argument --trials: expected a whole number up to 2\*\*63 - 1; got '10000.*"
                                    r"\(401 characters\)"),
    (["--trials", "1" * 5000], r"argument --trials: expected a whole number >= 0; got '1111.*\(5000 characters\)"),
    (["--seed", str(2**63)], r"argument --seed: expected a whole number up to 2\*\*63 - 1"),
    (["--generations", str(10**12)], r"fogel with 1 trial x 1,000,000,000,000 generations, .* needs about .* GiB"),
    (["--generations", "0"], r"error: --generations 0: generations must be a whole number >= 1; got 0"),
    (["--trials", "0"], r"error: --trials 0: trials must be a whole number >= 1; got 0"),
    (["--workers", "0"], r"--workers must be a whole number >= 1; got 0"),
]


@pytest.mark.parametrize(
    ("extra", "message"), BAD_EVOLVE_ARGUMENTS, ids=[" ".join(a)[:40] for a, _ in BAD_EVOLVE_ARGUMENTS]
)
def test_evolve_command_rejects_bad_arguments(extra, message, tmp_path, capsys):
    import re

    out = tmp_path / "run.npz"
    base = ["evolve", "--trials", "1", "--generations", "1", "--parents", "6", "--out", str(out), "--quiet",
            "--workers", "1"]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(base + extra)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m ttt_helpers")
    assert re.search(message, err), err
    assert "Traceback" not in err
    assert not out.exists()


def test_evolve_command_needs_out(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evolve", "--trials", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "the following arguments are required: --out" in err


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.slow
def test_bad_arguments_exit_2_without_a_traceback_in_a_real_process(tmp_path, repo_root):
    done = run_cli(["evolve", "--trials", "-1", "--out", str(tmp_path / "x.npz")], repo_root)
    assert done.returncode == 2
    assert "usage:" in done.stderr and "--trials" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli(["evolve", "--parents", "0", "--out", str(tmp_path / "x.npz")], repo_root)
    assert done.returncode == 2
    assert "parents must be a whole number >= 1" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_evaluate_command_reports_the_champion(champion_path, champion, paper_best_response, capsys):
    assert main(["evaluate", str(champion_path)]) == 0
    text = capsys.readouterr().out
    network, provenance = champion
    mean, variance = exact_score(network)
    audit = audit_player(network_player(network))
    assert f"network: {network.hidden_count} hidden nodes" in text
    assert f"  seed: {provenance['seed']}" in text and f"  trial: {provenance['trial']}" in text
    assert (f"exact expected score over the 32-game protocol: {mean:.4f} (standard deviation "
            f"{math.sqrt(variance):.4f})") in text  # fmt: skip
    ceiling = paper_best_response
    assert f"best expected score any player of X can reach: {ceiling.ceiling:.4f}" in text
    assert f"(opening square {ceiling.opening})" in text
    assert (f"{audit.games} games, {audit.wins} wins, {audit.draws} draws, {audit.losses} losses") in text
    assert f"moves worse than the best: {audit.mistakes}" in text
    verdict = "never loses" if audit.losses == 0 else "can lose"
    assert f"verdict: {verdict}" in text


@pytest.mark.slow
def test_evaluate_command_on_a_file_that_is_not_json(tmp_path, repo_root):
    path = tmp_path / "bad.json"
    path.write_text("certainly not JSON")
    done = run_cli(["evaluate", str(path)], repo_root)
    assert done.returncode == 2
    assert "usage:" in done.stderr and "is not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"FILE .*net.json: no such file"),
        (b"\xff\xfe\x00 binary", r"utf-8|codec"),
        (b'{"format": "fogel-ttt-network", "version": 1}', r"lacks the field|field 'hidden_count' is missing"),
    ],
    ids=["missing", "binary", "incomplete"],
)
def test_evaluate_command_rejects_bad_files(tmp_path, capsys, content, message):
    import re

    path = tmp_path / "net.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and re.search(message, err), err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--out", "/no/such/dir/run.npz"], "--out /no/such/dir/run.npz: the folder /no/such/dir does not exist"),
        (["--out", "{tmp}"], "is a directory; give a file name"),
        (["--out", "{tmp}/run.npz", "--champion", "/no/such/dir/c.json"], "--champion /no/such/dir/c.json: the folder"),
        (["--out", "{tmp}/run.npz", "--parents", "100000000"], "needs about .* GiB of memory; this machine has"),
    ],
)
def test_evolve_refuses_bad_outputs_and_impossible_sizes_before_running(tmp_path, monkeypatch, capsys, extra, message):
    import evolving_ttt.cli as cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the run started although its arguments were refused")

    monkeypatch.setattr(cli, "run_system", must_not_run)
    with pytest.raises(SystemExit) as stop:
        main(["evolve", "--quiet", *(part.format(tmp=tmp_path) for part in extra)])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and re.search(message, error)


def test_the_memory_estimate_follows_the_measured_growth():
    small = estimated_memory(FogelSettings(parents=50, trials=20), workers=2)
    assert 100e6 < small < 200e6  # 124 MB measured for the paper's run on two processes
    # the table of rivals grows with the square of the population
    assert estimated_memory(FogelSettings(parents=8000, trials=1)) > 10 * estimated_memory(
        FogelSettings(parents=2000, trials=1)
    )


def test_arena_command_prints_the_table_and_writes_the_json(tmp_path, capsys):
    out = tmp_path / "arena.json"
    assert main(["arena", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    names = [row["name"] for row in report["players"]]
    assert names[:2] == ["random", "rule base"] and "Fogel champion" in names
    for name in names:
        assert name in printed
    perfect = report["players"][names.index("perfect")]
    assert perfect["can_lose"] == {"X": False, "O": False}
    assert perfect["results"]["perfect"]["X"] == pytest.approx([0, 1, 0])
    n = len(names)
    assert len(report["round_robin"]["outcomes_x_row_o_column"]) == n
    with pytest.raises(SystemExit):
        main(["arena", "--json", "/no/such/dir/arena.json"])
    assert "--json /no/such/dir/arena.json: the folder /no/such/dir does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["al-khateeb", "--runs", "100000000"], "al-khateeb with 100,000,000 runs x .* needs about .* GiB.* Use fewer"),
        (["ling-lam", "--seeds", "100000000"], "ling-lam with .* 100,000,000 seeds x .* needs about .* GiB"),
        (["mohammadi", "--population", "100000000"], "mohammadi with .* population 100000000, .* needs about .* GiB"),
    ],
)
def test_system_commands_refuse_runs_too_large_for_the_machine_before_starting(tmp_path, capsys, command, message):
    with pytest.raises(SystemExit) as stop:
        main([*command, "--out", str(tmp_path / "run.npz"), "--quiet"])
    assert stop.value.code == 2
    assert re.search(message, capsys.readouterr().err)


# Look at your result (issue 38): evaluate any system's player, add players to the arena, summarise a sweep.


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "title"),
    [("al_khateeb_ttt.json", "Al-Khateeb (2012)"), ("ling_lam_nndtf.json", "Ling and Lam (2011)"),
     ("mohammadi_champion.json", "Mohammadi et al. (2013)")],
)  # fmt: skip
def test_evaluate_measures_a_player_of_any_system_beside_the_books(name, title, tmp_path, capsys):
    from evolving_ttt.arena import catalogue, measure
    from evolving_ttt.records import DATA
    from evolving_ttt.systems import player_from_file

    copy = tmp_path / f"mine_{name}"
    copy.write_bytes((DATA / name).read_bytes())
    assert main(["evaluate", str(copy)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith(copy.stem + " ")]
    assert len(rows) == 1 and title in rows[0]
    table_rows = [line for line in lines[2:] if line and not line.startswith(("results:", copy.stem + ":"))]
    assert len(table_rows) == len(catalogue()) + 1 and table_rows[-1] == rows[0]
    assert "exact expected score over the 32-game protocol" not in "\n".join(lines)  # Fogel's analysis only
    row = measure(player_from_file(copy))
    assert f"{row.protocol_score:>12.2f}" in rows[0]


def test_evaluate_refuses_a_file_no_system_reads(tmp_path, capsys):
    path = tmp_path / "odd.json"
    path.write_text('{"format": "something-else", "version": 1}')
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "is not a player saved by any system of the book" in err and "fogel:" in err and "mohammadi:" in err


@pytest.mark.slow
def test_arena_add_puts_a_saved_player_beside_the_books(tmp_path, capsys):
    from evolving_ttt.arena import catalogue
    from evolving_ttt.records import DATA

    copy = tmp_path / "my_player.json"
    copy.write_bytes((DATA / "ling_lam_baseline.json").read_bytes())
    json_out = tmp_path / "arena.json"
    assert main(["arena", "--add", str(copy), "--json", str(json_out)]) == 0
    report = json.loads(json_out.read_text())
    names = [row["name"] for row in report["players"]]
    assert names[-1] == "my_player" and len(names) == len(catalogue()) + 1
    assert report["players"][-1]["system"] == "Ling and Lam (2011)"
    assert len(report["round_robin"]["outcomes_x_row_o_column"]) == len(names)


def test_sweep_summary_prints_every_cell_with_its_intervals(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert main(["sweep", "run", "fogel", "--set", "generations=2", "--set", "trials=1", "--set", "parents=6,7",
                 "--seeds", "2", "--db", str(db), "--quiet", "--workers", "1"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["sweep", "summary", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "generations=2, trials=1, parents=6 (2 tasks):" in text
    assert "generations=2, trials=1, parents=7 (2 tasks):" in text
    assert text.count("95% interval") + text.count("the same in all 2 tasks") == 2 * 6 and "nan" not in text
    for line in text.splitlines():  # a bootstrap interval stays within the tasks' values: never "0 to 0"
        if "95% interval" in line:
            low, high = (float(v) for v in line.split("95% interval ")[1].split(" to "))
            assert low < high, line
    before = db.read_bytes()
    with pytest.raises(SystemExit):
        main(["sweep", "summary", "--db", str(tmp_path / "missing.sqlite")])
    assert db.read_bytes() == before
    # sweep check re-runs the recorded tasks, here on two processes, and finds them the same; a changed player is
    # one line naming the task.
    assert main(["sweep", "check", "--db", str(db), "--workers", "2", "--quiet"]) == 0
    assert capsys.readouterr().out == "4 tasks re-run: every measure and player the same bits as recorded\n"
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE tasks SET player = player || ' ' WHERE cell=0 AND seed=2")
    assert main(["sweep", "check", "--db", str(db), "--tasks", "2", "--workers", "1", "--quiet"]) == 0
    with pytest.raises(SystemExit):
        main(["sweep", "check", "--db", str(db), "--workers", "1", "--quiet"])
    assert "task (0, 2, 0) gives another player than recorded" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "suffix", "panels"),
    [
        (["evolve", "--trials", "2", "--generations", "3", "--parents", "6"], ".npz", 1),
        (["al-khateeb", "--runs", "2", "--generations", "3"], ".npz", 1),
        (["ling-lam", "--seeds", "2", "--iterations", "5", "--methods", "nndtf,baseline"], ".npz", 2),
        (["mohammadi", "--runs", "1", "--generations", "2", "--population", "8", "--seeds-kept", "2"], ".json", 2),
        (["q-learning", "--tasks", "2", "--episodes", "300", "--checkpoints", "3"], ".json", 3),
    ],
    ids=["fogel", "al-khateeb", "ling-lam", "mohammadi", "q-learning"],
)
@pytest.mark.slow
def test_plot_draws_any_systems_record(argv, suffix, panels, tmp_path, capsys):
    import matplotlib.image

    record = tmp_path / f"run{suffix}"
    assert main([*argv, "--out", str(record), "--quiet", "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["plot", str(record), "--out", str(tmp_path / "run.png")]) == 0
    assert "the curves of a run record" in capsys.readouterr().out
    picture = matplotlib.image.imread(tmp_path / "run.png")
    assert picture.shape[0] > 300 * panels and picture.shape[1] > 700
    odd = tmp_path / "record.png"  # a record under a picture's name: the picture may not replace its source
    odd.write_bytes(record.read_bytes())
    with pytest.raises(SystemExit):
        main(["plot", str(odd), "--out", str(odd), "--force"])
    assert "may not replace an input" in capsys.readouterr().err and odd.read_bytes() == record.read_bytes()


def test_plot_draws_a_sweeps_cells_and_refuses_an_unknown_measure(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert main(["sweep", "run", "fogel", "--set", "generations=2", "--set", "trials=1", "--set", "parents=6,7,8",
                 "--seeds", "2", "--db", str(db), "--quiet", "--workers", "1"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["plot", str(db), "--out", str(tmp_path / "cells.png"), "--measure", "fogel_score"]) == 0
    assert "the cells of a sweep" in capsys.readouterr().out
    assert (tmp_path / "cells.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(SystemExit):
        main(["plot", str(db), "--out", str(tmp_path / "bad.png"), "--measure", "elegance"])
    assert "--measure elegance: the sweep has no such measure" in capsys.readouterr().err
    assert not (tmp_path / "bad.png").exists()
