// A tic-tac-toe board for the rendered book, which plays without a Python kernel (chapter 26).
//
// It never computes a move itself. Every player's moves are tabulated in Python
// (evolving_ttt.static_board) and written to ttt_players.js: for each side, a number epsilon and, for
// each of the 3^9 base-3 board numbers, a set of squares as a 9-bit mask. A move is a uniformly random
// empty square with probability epsilon, else a uniformly random square of the set (a single square for
// a deterministic player). A side whose codes begin with "w" is in the weighted form (the MCTS players,
// chapter 27): for each board number in turn, one digit k and k groups of a square digit and its weight in
// two base-32 digits; the move is a square drawn with probability weight / (sum of the board's weights).
// This script only draws the board, takes clicks, looks moves up and detects the end of a game. It runs on
// any page holding <div id="ttt-static-play"></div> and does nothing elsewhere.
(function () {
  "use strict";
  var here = document.currentScript ? document.currentScript.src : "";
  var LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];
  var DIGITS = "0123456789abcdefghijklmnopqrstuv";
  var SYMBOL = { "1": "X", "-1": "O", "0": "" };

  function winnerOf(board) {
    for (var k = 0; k < LINES.length; k++) {
      var a = LINES[k][0], b = LINES[k][1], c = LINES[k][2];
      if (board[a] !== 0 && board[a] === board[b] && board[b] === board[c]) return board[a];
    }
    return 0;
  }

  function isFull(board) {
    return board.every(function (v) { return v !== 0; });
  }

  function boardNumber(board) {
    // Square s contributes digit * 3^s: digit 1 for X, 2 for O (the book's base-3 index).
    var n = 0, place = 1;
    for (var s = 0; s < 9; s++) {
      n += (board[s] === 1 ? 1 : board[s] === -1 ? 2 : 0) * place;
      place *= 3;
    }
    return n;
  }

  function weightedMove(side, n) {
    var codes = side.codes, at, b, j;
    if (!side.offsets) {  // where each board's entry starts, found once per side
      side.offsets = [];
      for (b = 0, at = 1; b < 19683; b++) {
        side.offsets.push(at);
        at += 1 + 3 * Number(codes.charAt(at));
      }
    }
    at = side.offsets[n];
    var k = Number(codes.charAt(at)), squares = [], weights = [], total = 0;
    for (j = 0; j < k; j++) {
      var p = at + 1 + 3 * j;
      var w = DIGITS.indexOf(codes.charAt(p + 1)) * 32 + DIGITS.indexOf(codes.charAt(p + 2));
      squares.push(Number(codes.charAt(p)));
      weights.push(w);
      total += w;
    }
    if (total === 0) throw new Error("no move tabulated for board " + n);
    var r = Math.random() * total;
    for (j = 0; j < k; j++) {
      r -= weights[j];
      if (r < 0 && weights[j] > 0) return squares[j];
    }
    return squares[k - 1];
  }

  function computerMove(player, mark, board) {
    var side = player.sides[mark === 1 ? "X" : "O"];
    var n = boardNumber(board);
    if (side.codes.charAt(0) === "w") return weightedMove(side, n);
    var mask = DIGITS.indexOf(side.codes.charAt(2 * n)) * 32 + DIGITS.indexOf(side.codes.charAt(2 * n + 1));
    var chosen = [], empty = [];
    for (var s = 0; s < 9; s++) {
      if (board[s] === 0) empty.push(s);
      if (mask & (1 << s)) chosen.push(s);
    }
    if (chosen.length === 0) throw new Error("no move tabulated for board " + n);
    var pool = side.epsilon > 0 && Math.random() < side.epsilon ? empty : chosen;
    return pool[Math.floor(Math.random() * pool.length)];
  }

  function build(root) {
    var players = window.TTT_PLAYERS;
    var state = { board: [0, 0, 0, 0, 0, 0, 0, 0, 0], human: 1, over: false, moves: [] };
    var tally = {};

    root.innerHTML = "";
    root.className = "ttt-static-play";
    var controls = document.createElement("div");
    controls.className = "ttt-controls";
    var opponent = document.createElement("select");
    opponent.id = "ttt-static-opponent";
    opponent.setAttribute("aria-label", "opponent");
    players.forEach(function (p, i) {
      var option = document.createElement("option");
      option.value = String(i);
      option.textContent = p.name + " (" + p.system + ")";
      opponent.appendChild(option);
    });
    // The book's spine first: Fogel's champion is the opponent a reader meets, when the page has it.
    var champion = players.map(function (p) { return p.name; }).indexOf("Fogel champion");
    opponent.value = String(champion >= 0 ? champion : 0);
    var side = document.createElement("select");
    side.id = "ttt-static-side";
    side.setAttribute("aria-label", "your side");
    [["1", "you play X (first)"], ["-1", "you play O (second)"]].forEach(function (pair) {
      var option = document.createElement("option");
      option.value = pair[0];
      option.textContent = pair[1];
      side.appendChild(option);
    });
    var fresh = document.createElement("button");
    fresh.type = "button";
    fresh.id = "ttt-static-new";
    fresh.textContent = "New game";
    controls.appendChild(opponent);
    controls.appendChild(side);
    controls.appendChild(fresh);
    root.appendChild(controls);

    var status = document.createElement("p");
    status.id = "ttt-static-status";
    status.setAttribute("aria-live", "polite");
    root.appendChild(status);

    var grid = document.createElement("div");
    grid.className = "ttt-grid";
    var squares = [];
    for (var s = 0; s < 9; s++) {
      var cell = document.createElement("button");
      cell.type = "button";
      cell.className = "ttt-square";
      cell.setAttribute("data-square", String(s));
      cell.setAttribute("aria-label", "square " + s);
      cell.addEventListener("click", onClick.bind(null, s));
      squares.push(cell);
      grid.appendChild(cell);
    }
    root.appendChild(grid);

    var about = document.createElement("p");
    about.className = "ttt-about";
    root.appendChild(about);
    var record = document.createElement("p");
    record.id = "ttt-static-tally";
    root.appendChild(record);

    function current() { return players[Number(opponent.value)]; }

    function draw() {
      for (var s = 0; s < 9; s++) {
        squares[s].textContent = SYMBOL[String(state.board[s])];
        squares[s].disabled = state.over || state.board[s] !== 0;
      }
      root.setAttribute("data-moves", state.moves.join(","));
      root.setAttribute("data-human", String(state.human));
      about.textContent = current().description;
      var t = tally[current().name] || { wins: 0, draws: 0, losses: 0 };
      record.textContent = "Against " + current().name + ": " + t.wins + " won, " + t.draws + " drawn, " +
        t.losses + " lost.";
    }

    function finish() {
      var w = winnerOf(state.board);
      if (w === 0 && !isFull(state.board)) return false;
      state.over = true;
      var t = tally[current().name] || (tally[current().name] = { wins: 0, draws: 0, losses: 0 });
      if (w === 0) { t.draws += 1; status.textContent = "Draw."; }
      else if (w === state.human) { t.wins += 1; status.textContent = "You win (" + SYMBOL[String(w)] + ")."; }
      else { t.losses += 1; status.textContent = current().name + " wins (" + SYMBOL[String(w)] + ")."; }
      root.setAttribute("data-result", String(w));
      return true;
    }

    function place(square, mark) {
      state.board[square] = mark;
      state.moves.push(square);
    }

    function computerTurn() {
      place(computerMove(current(), -state.human, state.board), -state.human);
      if (!finish()) status.textContent = "Your turn (" + SYMBOL[String(state.human)] + ").";
    }

    function newGame() {
      state = { board: [0, 0, 0, 0, 0, 0, 0, 0, 0], human: Number(side.value), over: false, moves: [] };
      root.removeAttribute("data-result");
      status.textContent = "Your turn (" + SYMBOL[String(state.human)] + ").";
      if (state.human === -1) computerTurn();
      draw();
    }

    function onClick(square) {
      if (state.over || state.board[square] !== 0) return;
      place(square, state.human);
      if (!finish()) computerTurn();
      draw();
    }

    fresh.addEventListener("click", newGame);
    opponent.addEventListener("change", newGame);
    side.addEventListener("change", newGame);
    newGame();
    root.setAttribute("data-ready", "true");
  }

  function start() {
    var root = document.getElementById("ttt-static-play");
    if (!root) return;
    if (window.TTT_PLAYERS) { build(root); return; }
    var data = document.createElement("script");
    data.src = here.replace(/play_board\.js(\?.*)?$/, "ttt_players.js");
    data.onload = function () { build(root); };
    data.onerror = function () { root.textContent = "The players' tables (ttt_players.js) could not be loaded."; };
    document.head.appendChild(data);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
