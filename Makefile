# Two commands on a fresh Debian machine (see README.md):
#   make demo   installs what is missing, builds, runs parity's demo
#   make test   installs what is missing, builds, runs every test
# SANITIZE=1 builds and tests with ASan+UBSan in build-asan/.
#   make fuzz-smoke  builds the libFuzzer targets (clang 16) and runs each for
#                    the same 20,000 seeded inputs (at most 20 s)
#   make fuzz FUZZ_SECONDS=600   the same, for as long as asked

JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD ?= build-asan
# -O1 -g1: half the compile time of -O2 -g under ASan+UBSan (53 s -> 26 s for
# check.cc here); line tables are kept, so every report still names file:line.
CMAKE_FLAGS += -DPARITY_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARITY_BUILD_BENCH=OFF '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG'
# Every report fails the run. LSan ignores only what ONNX Runtime itself keeps
# at exit (tests/lsan.supp). The python tests run the ASan binary as a child
# process, so they need no LD_PRELOAD and see its reports as failures too.
export ASAN_OPTIONS = detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp):print_suppressions=0
# ASan's dlopen interceptor makes libasan the caller, so dlopen no longer sees
# the binary's RUNPATH: the bundled ORT's folder is named here instead. The
# OpenVINO plugin loads TBB with RTLD_DEEPBIND, which ASan refuses
# (google/sanitizers#611): no plugin EP is discovered, and its tests skip.
export LD_LIBRARY_PATH := $(abspath .deps/onnxruntime/lib)$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
export PARITY_EP_DISCOVERY = 0
else
BUILD ?= build
endif
PARITY = $(BUILD)/parity
PY = $(abspath .venv/bin/python)

.PHONY: all deps build venv-path test demo unit python-package python-tests house-tests clean format fuzz fuzz-smoke

all: build

# Debian packages + ONNX Runtime + uPlot, then the pinned .venv (torch & co.,
# several GB the first time), then ONNX 1.23's C++ library built from source.
deps:
	@scripts/install-deps.sh
	@scripts/venv.sh
	@scripts/fetch-onnx.sh

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt venv-path
	@cmake --build $(BUILD) -j $(JOBS)

# Puts this checkout's python/ (the package parity, parity.torch included) on
# .venv's path with a .pth file, so `.venv/bin/python -m parity.torch dump ...`
# works with no PYTHONPATH. It names the checkout make runs in; a second
# checkout sharing the venv rewrites it. parity._core is not there (it is
# built by `pip install .`); parity.torch does not need it.
venv-path: deps
	@$(PY) -c 'import sys, sysconfig; open(sysconfig.get_paths()["purelib"] + "/parity-source.pth", "w").write(sys.argv[1] + "\n")' '$(abspath python)'

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The Python package (pyproject.toml) built as `pip install .` builds it, into
# build-pkg/ (not into .venv): python/tests/test_api.py tests it against the CLI.
# Its CMake build (build-py/) compiles nothing of parity's a second time: it
# links the extension to $(BUILD)/'s libraries and installs $(BUILD)/parity
# (PARITY_PREBUILT_DIR, CMakeLists.txt), so it compiles only the extension's own
# module.cc and nanobind (about 1 minute against about 20: docs/bench.md,
# "CI from a clean clone"). A plain `pip install .` compiles everything itself.
# Not under SANITIZE=1: Python cannot load the ASan objects of build-asan/.
# Alone, `make python-package` builds only what the package takes from $(BUILD)/
# (the libraries and parity, not the tests).
ifeq ($(SANITIZE),1)
PKG_PREBUILT =
python-package: deps
else
PKG_PREBUILT = -C cmake.define.PARITY_PREBUILT_DIR=$(abspath $(BUILD))
python-package: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) --target parity
endif
	$(PY) -m pip install -q --no-build-isolation --no-deps --upgrade --target build-pkg $(PKG_PREBUILT) .

# The package's own tests (test_api.py, test_python_docs.py) need build-pkg/:
# under make they fail without it (PARITY_REQUIRE_PACKAGE); a bare pytest run
# from the source tree skips them, saying why.
#
# One pytest worker per core (pytest-xdist): a worker runs whole groups, a test
# module or the modules that share a cache or a Ray cluster, longest first
# (python/tests/conftest.py). PYTEST_JOBS=0 runs them in this process, in order.
# --durations=25: the slowest tests close the log, where a CI run's time goes.
PYTEST_JOBS ?= $(JOBS)
python-tests: build python-package
	PARITY_REQUIRE_PACKAGE=1 PARITY_BINARY=$(abspath $(PARITY)) PYTHONPATH=build-pkg:python $(PY) -m pytest -q \
	  -n $(PYTEST_JOBS) --dist loadgroup --durations=25 python/tests

# Repository rules (function lengths, docs cite real tests, layers, the package
# layout): they read the tree, not the product. docs/architecture.md, "Where to
# add a test".
house-tests: deps
	$(PY) -m pytest -q tests/house

# The cheap part first: the house tests read the tree (seconds, before the build),
# then ctest, then the Python tests. A failure stops `make test` there; CI runs
# `make -k test`, which runs every part and still fails.
test: house-tests unit python-tests

demo: build
	$(PARITY) demo --out demo-report

FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-smoke: deps
	FUZZ_SEED=1 FUZZ_RUNS=20000 scripts/fuzz.sh 20

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf build build-asan build-fuzz build-py build-pkg
