# Build, test and benchmark the book. Needs only python3 (>= 3.11) and make:
#   make venv    create .venv with the pinned packages and ttt_helpers installed in editable mode
#   make book    build the HTML book into _build/html from the committed outputs (make test proves them current)
#   make book-fresh  the same, executing every chapter (later runs re-execute only the chapters whose code changed)
#   make test    ruff, strict build of the committed outputs, unit tests and notebook output check (nbval) on two
#                processes with the browser tests beside them
#   make test-fast  the unit tests not marked slow, on two processes: no notebooks, no browser (about a minute)
#   make play    open the play board as an app in the browser (Voila), to play every player without code
#   make bench   run the benchmark script
#   make clean   remove the built book and numba's compiled kernels (its cache misses edits to called modules)

# Python keeps each module it compiles to bytecode (__pycache__) unless PYTHONDONTWRITEBYTECODE is set, as it is on
# some machines (the one the README's timings come from among them). Then every process (each test worker, notebook
# kernel, command and build) compiles numpy, numba, pandas, Sphinx and the package from source again: 1.6 of the
# 2.4 s of `import ttt_helpers`. The pinned packages are installed without bytecode (--no-compile below), so each
# module is compiled once, on first use, and kept.
unexport PYTHONDONTWRITEBYTECODE

VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(PY) -m pip
UV       := $(VENV)/bin/uv
RUFF     := $(VENV)/bin/ruff
JB       := $(VENV)/bin/jupyter-book
JCACHE   := $(VENV)/bin/jcache
# The book's notebooks: every chapter the table of contents lists (play_app.ipynb is the app of `make play`).
CHAPTERS := $(filter-out book/play_app.ipynb,$(wildcard book/*.ipynb))
STAMP    := $(VENV)/.installed
HTML     := _build/html/index.html
# Chapters that need the same experiment share it (ttt_helpers.run_experiment): each run is computed once and
# kept until the code changes (see CODE below).
RUNS     := $(CURDIR)/_build/run-cache
export TTT_RUN_CACHE := $(RUNS)
# `make book` renders the outputs committed with the notebooks, which `make test` re-executes and compares (nbval).
# `make book-fresh` executes notebooks through jupyter-cache (execute_notebooks: cache in _config.yml), which
# re-executes a chapter only when its code cells change. A chapter's outputs also depend on the package, the helpers, the
# saved players and the pinned packages: when any of those files changes, the cached outputs, the shared runs and
# the built pages are all dropped, and every chapter is executed again.
CACHE    := _build/.jupyter_cache
CODE     := evolving_ttt ttt_helpers.py book/data requirements.txt pyproject.toml _config.yml
CODE_SUM := _build/.code-checksum
# The book configuration without notebook execution, for `make book` and the strict build of `make test`; it sits
# beside _config.yml because Jupyter Book reads the paths in a configuration relative to the file.
NO_EXECUTE := .config-no-execute.yml

.PHONY: all venv book book-fresh test test-fast play bench clean

all: book

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# requirements.txt pins every package the book needs, dependencies included (pip check proves it), so the
	# installer skips resolving, and nothing is byte-compiled (modules compile on first use, and are kept). The
	# installer is uv, pinned in requirements.txt and installed first with pip: it fetches and unpacks the packages in
	# parallel, about 8 s for the whole list on the README's machine against about 50 s for pip alone.
	$(PIP) install --disable-pip-version-check --no-deps --no-compile "$$(grep '^uv==' requirements.txt)"
	$(UV) pip install --python $(PY) --no-deps -r requirements.txt
	$(PIP) check
	$(UV) pip install --python $(PY) --no-deps -e .
	# MathJax 2 from the pinned jupyter-server-mathjax package, for the book's offline maths (see _config.yml).
	ln -sfn "$$($(PY) -c 'import jupyter_server_mathjax as m, pathlib; print(pathlib.Path(m.__file__).parent / "static")')" $(VENV)/mathjax
	touch $@

$(NO_EXECUTE): _config.yml
	sed 's/^  execute_notebooks: cache$$/  execute_notebooks: "off"/' _config.yml > $@
	grep -q '^  execute_notebooks: "off"$$' $@

book: $(STAMP) $(NO_EXECUTE)
	$(JB) build . --config $(NO_EXECUTE)
	@echo "Book built from the committed outputs: file://$(CURDIR)/$(HTML)"

book-fresh: $(STAMP)
	mkdir -p _build
	@sum="$$(find $(CODE) -type f ! -path '*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum | sha256sum)"; \
	if [ "$$sum" != "$$(cat $(CODE_SUM) 2>/dev/null)" ]; then \
		echo "The code changed since the last build (or there was none): every chapter is executed."; \
		rm -rf $(CACHE) $(RUNS) _build/html _build/.doctrees _build/jupyter_execute; \
		echo "$$sum" > $(CODE_SUM); \
	fi
	# The chapters not yet in the cache are executed into it on two processes, one chapter at a time each, the
	# longest first by the running time their committed outputs record (evolving_ttt/book_execution.py); the build
	# then takes every chapter's outputs from the cache (a chapter that failed there is executed again by the
	# build, which stops at its error).
	yes | $(JCACHE) notebook -p $(CACHE) add $(CHAPTERS) > /dev/null
	$(PY) -m evolving_ttt.book_execution $(CACHE) $(CHAPTERS) || echo "The build executes the failed chapters again."
	$(JB) build .
	@echo "Book built, every chapter executed: file://$(CURDIR)/$(HTML)"

test: $(STAMP) $(NO_EXECUTE)
	rm -rf $(RUNS) _build/warm-up
	$(RUFF) check .
	# One shell, three stages.
	# 1. Two jobs side by side, one process each. The strict build renders the outputs committed with the notebooks
	# (configuration _config.yml with execution switched off); the nbval run below re-executes every notebook and
	# fails if an output is not what the code prints, so the pages are proven current by the end of `make test`
	# (`make book-fresh` executes). Beside it, the same-bits battery runs once as is, two parts at a time (the build
	# is a single process, and the browser tests that follow it wait more than they compute): it compiles every
	# numba kernel of the package into numba's cache (and Python's modules to bytecode), which a fresh clone would
	# otherwise do in whichever test or notebook needs each first, several processes at once. The same-bits test
	# takes it for its as-is run (TTT_SAME_BITS_WARM_UP below) and checks its hashes.
	# 2. As soon as the pages are built, the browser tests start, in one process, and run to the end beside the rest:
	# every page in headless Chromium without a JavaScript error, the play chapter's board played by clicks, and the
	# app of `make play` against every opponent (most of their time is waiting for pages, so they cost the tests
	# little, and they fill the core the build leaves idle while the battery finishes; every wait is for a state,
	# never a fixed pause long enough only on an idle machine). Their report is printed after the tests'. Without
	# Chromium they are reported as skipped, with the reason.
	# 3. Once the battery is done, the unit tests and every notebook (nbval) in one run on two processes
	# (pytest-xdist): --dist loadscope sends each test module, and each notebook with all its cells, to one process,
	# so that a notebook runs in order in one kernel. Chapters that need the same run share it through the run cache
	# (TTT_RUN_CACHE), which two processes may read and fill at once (file locks: a chapter that asks for a run
	# another is computing waits for it and reads it). The unit tests run with nbval loaded, as they do under plain
	# `pytest`. The work is handed out longest first (tests/conftest.py orders it; --no-loadscope-reorder keeps that
	# order). The 30 slowest tests and cells are listed at the end.
	mkdir -p _build/warm-up
	TTT_RUN_CACHE=_build/warm-up/run-cache $(PY) tests/same_bits_battery.py _build/warm-up/hashes.json \
		--probe _build/warm-up/probe.json --processes 2 2> _build/warm-up/battery.log & warm=$$!; \
	$(JB) build --all . --config $(NO_EXECUTE) -W -n --keep-going || { wait $$warm; exit 1; }; \
	$(PY) -m pytest -p no:nbval -rs tests/browser > _build/browser-tests.log 2>&1 & browser=$$!; \
	wait $$warm || { cat _build/warm-up/battery.log; kill $$browser; exit 1; }; \
	TTT_SAME_BITS_WARM_UP=$(CURDIR)/_build/warm-up \
		$(PY) -m pytest -n 2 --dist loadscope --no-loadscope-reorder --nbval tests book --ignore=tests/browser \
		--durations=30; tested=$$?; \
	wait $$browser; browsed=$$?; \
	echo "Browser tests (run beside the tests above):"; cat _build/browser-tests.log; \
	[ $$tested -eq 0 ] && [ $$browsed -eq 0 ]

# The quick check while working: the unit tests not marked slow (pyproject.toml's markers), on two processes; every
# module of evolving_ttt is still exercised. make test runs them all, with the notebooks and the browser tests.
test-fast: $(STAMP)
	$(PY) -m pytest -p no:nbval -n 2 -m "not slow" tests --ignore=tests/browser

# Voila runs book/play_app.ipynb (the play chapter's widget alone) and opens it in the browser; Ctrl-C stops it.
play: $(STAMP)
	$(VENV)/bin/voila book/play_app.ipynb

bench: $(STAMP)
	$(PY) bench/benchmark.py
	$(PY) bench/arena.py
	$(PY) bench/ling_lam.py
	$(PY) bench/al_khateeb.py
	$(PY) bench/mohammadi.py
	$(PY) bench/parallel.py
	$(PY) bench/sweep.py
	$(PY) bench/numerics.py
	$(PY) bench/ling_lam_engine.py
	$(PY) bench/mcts.py
	$(PY) bench/q_learning.py

clean:
	rm -rf _build
	find evolving_ttt -name '*.nbi' -delete -o -name '*.nbc' -delete  # numba's cache misses changes in called modules
