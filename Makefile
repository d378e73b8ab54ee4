# Two commands on a fresh Debian machine (see README.md):
#   make demo   installs what is missing, builds, runs parity's demo
#   make test   installs what is missing, builds, runs every test
# SANITIZE=1 builds and tests with ASan+UBSan in build-asan/.

JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
BUILD ?= build-asan
CMAKE_FLAGS += -DPARITY_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARITY_BUILD_BENCH=OFF
else
BUILD ?= build
endif
PARITY = $(BUILD)/parity
PY = /usr/bin/python3

.PHONY: all deps build test demo unit python-tests clean format

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

python-tests: build
	PARITY_BINARY=$(abspath $(PARITY)) PYTHONPATH=python $(PY) -m pytest -q python/tests

test: unit python-tests

demo: build
	$(PARITY) demo --out demo-report

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf build build-asan
