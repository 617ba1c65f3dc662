# td-course: two commands from a fresh clone.
#   make        builds and runs the course (venv, notebooks, solutions, release, checks)
#   make test   passes the tests (sets up what it needs; does not assume `make` ran)
# `make help` lists every target.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.td-installed
# Jupyter, IPython and matplotlib state stays inside the project, not in $HOME.
STATE := $(CURDIR)/.state
export JUPYTER_CONFIG_DIR := $(STATE)/jupyter/config
export JUPYTER_DATA_DIR := $(STATE)/jupyter/data
export JUPYTER_RUNTIME_DIR := $(STATE)/jupyter/runtime
export IPYTHONDIR := $(STATE)/ipython
export MPLCONFIGDIR := $(STATE)/matplotlib
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
LAB_PORT ?= 8888

.DEFAULT_GOAL := all
.PHONY: all course setup notebooks solutions site release validate checks autograde-demo collect-zip report mistakes lab formgrader handout \
        hub test test-fast test-numerics chromium sandbox delegates figures bench lint equations clean help

all: course ## build and run the course (= make course)

course: setup notebooks solutions site release checks ## everything a user runs: notebooks, solutions, site, release, checks
	@echo "course built: solutions/site/index.html (course site), course/release/ (student notebooks)"

setup: $(STAMP) ## venv with pinned packages (torch==2.13.0 CPU) and td_lib editable; idempotent

# The stamp holds a hash of requirements.txt and pyproject.toml: the venv is reinstalled
# when their *content* changes, not when only their timestamps do (a fresh checkout, a
# copy of the repository).
REQ_HASH := $(shell cat requirements.txt pyproject.toml 2>/dev/null | sha256sum | cut -c1-16)
ifneq ($(REQ_HASH),$(shell cat $(STAMP) 2>/dev/null))
.PHONY: $(STAMP)
endif

$(STAMP):
	@if [ -L $(VENV) ]; then echo "error: $(VENV) links to another checkout's venv;" \
	  "run 'make setup' there (an editable install from here would repoint it)" >&2; exit 1; fi
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(PY) -c "import tools.env"
	echo $(REQ_HASH) > $(STAMP)

notebooks: setup ## Jupytext sources (.py) -> paired .ipynb (refuses to clobber an edited .ipynb)
	$(PY) -m tools.build.nbtool lint
	$(PY) -m tools.build.nbtool sync

solutions: setup ## execute every notebook with its solutions into solutions/<assignment>/<nb>.ipynb
	$(PY) -m tools.build.render

site: setup ## course site from the executed solutions (no re-run): solutions/site/, and build/site-student/ without solutions; offline
	$(PY) -m tools.site.pages

release: setup ## nbgrader generate_assignment for every assignment (checked for leaks)
	$(PY) -m tools.build.pipeline release

validate: setup ## sources pass their tests; releases fail them (inverted)
	$(PY) -m tools.build.pipeline validate

mistakes: setup ## grade a fake class planting each known mistake of every exercise; is each one recognised? (A= W= NO_SANDBOX=1)
	$(PY) -m tools.grading.mistakes $(if $(A),--assignment $(A)) $(if $(W),--workers $(W)) $(if $(NO_SANDBOX),--no-sandbox)

delegates: setup ## search every grading edition of td_lib for functions that answer an exercise (~20 min on 2 cores)
	$(PY) -m tools.meta.delegates

checks: setup ## recompute every number the course quotes
	@for s in checks/*_check.py; do echo "== $$s"; $(PY) $$s; done

autograde-demo: setup ## fake students -> autograde -> feedback -> export; print and assert the grades
	$(PY) -m tools.build.pipeline autograde-demo

grade: setup ## autograde every submission of A=<assignment> on Dask, sandboxed (bubblewrap: make sandbox) (W= NB= SCHEDULER= FORCE=1 STUDENTS=a,b MEM_GB= NO_SANDBOX=1 COURSE=)
	@test -n "$(A)" || { echo "usage: make grade A=<assignment> [W=N] [NB=K: notebooks at once per task] [SCHEDULER=tcp://host:8786] [FORCE=1]" \
	  "[STUDENTS=a,b] [MEM_GB=6] [NO_SANDBOX=1: trusted submissions only, no root needed] [COURSE=dir]" >&2; exit 2; }
	$(PY) -m tools.grading.grade $(A) $(if $(COURSE),--course $(COURSE)) $(if $(W),--workers $(W)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(FORCE),--force) \
	  $(if $(STUDENTS),--students $(STUDENTS)) $(if $(MEM_GB),--mem-gb $(MEM_GB)) $(if $(NO_SANDBOX),--no-sandbox) $(if $(NB),--notebooks-at-once $(NB))

collect-zip: setup ## import work handed in outside the exchange (LMS download): A=<assignment> ZIP=<zip or folder> [FORCE=1]
	@test -n "$(A)" -a -n "$(ZIP)" || { echo "usage: make collect-zip A=<assignment> ZIP=<zip file or folder>" \
	  "[FORCE=1: replace earlier submissions] [COURSE=dir]; hand-in zips of \`python handin.py --id <login>\` (students' LMS uploads)" >&2; exit 2; }
	$(PY) -m tools.grading.collect_zip $(A) "$(ZIP)" $(if $(FORCE),--force) $(if $(COURSE),--course $(COURSE))

report: setup ## the instructor's report of A=<assignment>: one offline HTML page, course/reports/<A>.html (OUT= COURSE=)
	@test -n "$(A)" || { echo "usage: make report A=<assignment> [OUT=page.html] [COURSE=dir]" >&2; exit 2; }
	$(PY) -m tools.report.report $(A) $(if $(COURSE),--course $(COURSE)) $(if $(OUT),--out $(OUT))

lab: setup ## JupyterLab on 127.0.0.1 on this repository, for the course's authors (students: the hub or the handout)
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --port=$(LAB_PORT) --no-browser \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) --notebook-dir=$(CURDIR)

formgrader: setup ## JupyterLab rooted at course/ for instructors: Nbgrader > Formgrader (/formgrader)
	cd course && $(CURDIR)/$(VENV)/bin/jupyter lab --ip=127.0.0.1 --port=$(LAB_PORT) --no-browser \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) --ServerApp.root_dir=$(CURDIR)/course

handout: setup ## student handout in dist/: released notebooks, td_lib wheel, pinned student requirements, README
	$(PY) -m tools.build.handout

hub: setup ## JupyterHub for a class on this machine (TD_STUDENT_ENV=<student venv> required; deploy/README.md)
	@$(PY) deploy/class_setup.py --check-env
	$(VENV)/bin/jupyterhub -f deploy/jupyterhub_config.py

chromium: ## Debian's chromium for the browser test (apt; skipped when present)
	bash .ci/install_chromium.sh

sandbox: ## Debian's bubblewrap, the grading sandbox (apt, as root or with sudo; skipped when present)
	bash .ci/install_bubblewrap.sh

# The unit tests run on two processes (pytest-xdist, one file per process at a time); the slow,
# pipeline and browser tests run after, on two processes too, one xdist group at a time
# (tests/conftest.py: a file's tests stay together, and the files sharing a session fixture,
# such as the Dask cluster and the graded classes, form one group built once).
UNIT := not slow and not pipeline and not browser
XDIST := -n 2 --dist loadfile
XDIST_SLOW := -n 2 --dist loadgroup

test: setup chromium sandbox ## the whole suite: lint, layer contracts, unit, slow, checks, nbgrader pipeline, browser; test-numerics
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -p no:cacheprovider $(XDIST) -m "$(UNIT)" --durations=15
	$(PY) -m pytest -p no:cacheprovider $(XDIST_SLOW) -m "not ($(UNIT))" --durations=30
	$(MAKE) --no-print-directory test-numerics

test-fast: setup ## unit tests only (no slow, pipeline or browser tests)
	$(PY) -m pytest -p no:cacheprovider $(XDIST) -m "$(UNIT)"

# The second numeric configuration (issue 21): the unit tests again with ONE thread for numpy's
# and scipy's OpenBLAS, OpenMP and torch's intra-op pool (MKL), where the default run uses every
# core, so reductions run in other orders; a result that only holds bit for bit in one order
# fails here. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE belong to the machine (older OpenBLAS
# builds compute wrong results on its CPU) and are left alone. By hand only, never in CI:
# CORETYPE=<kernel> (Zen, SandyBridge, Prescott, ...) runs another OpenBLAS kernel,
# CORETYPE=native OpenBLAS's own choice (both variables unset). The first command fails loudly
# unless every BLAS/OpenMP pool and torch really run one thread.
NUMERICS_ENV := $(if $(filter native,$(CORETYPE)),-u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE) \
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  $(if $(filter-out native,$(CORETYPE)),OPENBLAS_CORETYPE=$(CORETYPE))

test-numerics: setup ## unit tests but the machinery's, on 1 BLAS/OpenMP/torch thread per process (part of make test); by hand: CORETYPE=Zen|native
	env $(NUMERICS_ENV) $(PY) tests/numerics_support.py --threads 1
	env $(NUMERICS_ENV) $(PY) -m pytest -p no:cacheprovider $(XDIST) -m "$(UNIT) and not machinery"

figures: setup ## full-resolution CNN/LCN figures into build/figures/
	$(PY) scripts/cnn_lcn_figures.py

bench: setup ## timings: notebooks, escape-time study, ODE engine
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b; done

lint: setup ## ruff and the import-linter layer contracts (pyproject.toml [tool.importlinter])
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

equations: setup ## regenerate docs/EQUATIONS.md, the equation -> td_lib function index (from the docstrings)
	$(PY) -m tools.build.equation_index

clean: ## remove everything generated (keeps the venv)
	rm -rf build dist solutions/*/ course/release course/submitted course/autograded course/feedback course/downloaded \
	  course/gradebook.db course/grades.csv .state
	find course/source -name '*.ipynb' -delete
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18
