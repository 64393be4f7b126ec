# `make test` and `make demo` each prepare a fresh machine themselves: Debian packages, the
# Python environment in .venv/, the C++ build in build/cpp, and the package installed into .venv.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
JOBS ?= $(shell nproc)
APT_PACKAGES := g++ clang clang-format clang-tidy libclang-rt-14-dev ninja-build \
	libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev libssl-dev libelf-dev libxxhash-dev
# The remote cache tests' real S3 server: a throwaway Ceph RADOS Gateway (python/tests/s3_server.py).
APT_PACKAGES += ceph-mon ceph-osd radosgw ceph-common
TORCH_VERSION := 2.13.0
FUZZ_SECONDS ?= 60
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test demo setup apt venv cpp cpp-test python python-test lint tidy fuzz bench clean

test: setup cpp-test python lint tidy python-test fuzz

setup: apt venv

# Installs only what is missing, so a prepared machine pays one dpkg query and nothing else.
apt:
	@dpkg -s $(APT_PACKAGES) >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	    $(APT_PACKAGES); }

venv: $(VENV)/.deps-stamp

$(VENV)/.deps-stamp: python/requirements-dev.txt Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r python/requirements-dev.txt
	# pip, not uv: this machine keeps the CPU build of torch in pip's find-links directory.
	$(PY) -m pip install -q torch==$(TORCH_VERSION)
	touch $@

cpp: setup
	$(VENV)/bin/cmake -S cpp -B build/cpp -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DTENSORACLE_WERROR=ON
	$(VENV)/bin/cmake --build build/cpp -j $(JOBS)

cpp-test: cpp
	$(VENV)/bin/ctest --test-dir build/cpp --output-on-failure -j $(JOBS)

python: setup
	$(PY) -m pip install -q --no-build-isolation --no-deps ./python

python-test: python
	cd python && ../$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check python bench examples
	$(VENV)/bin/ruff format --check python bench examples
	find cpp -name '*.cpp' -o -name '*.hpp' | xargs clang-format --dry-run --Werror

# clang-tidy (config in .clang-tidy, findings are errors) over the core and the command.
tidy: cpp
	find cpp/src cpp/tools -name '*.cpp' | xargs -P $(JOBS) -n 4 clang-tidy -p build/cpp --quiet

# The libFuzzer targets run for FUZZ_SECONDS (60 by default) when clang is available.
fuzz: setup
	@if [ ! -x cpp/fuzz/run.sh ]; then echo "no fuzz targets yet"; \
	elif command -v clang++ >/dev/null; then \
	  $(VENV)/bin/cmake -S cpp -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
	    -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DTENSORACLE_FUZZ=ON -DTENSORACLE_SANITIZE=ON -DTENSORACLE_BUILD_TESTS=OFF && \
	  $(VENV)/bin/cmake --build build/fuzz -j $(JOBS) && \
	  FUZZ_SECONDS=$(FUZZ_SECONDS) PYTHON=$(abspath $(PY)) cpp/fuzz/run.sh build/fuzz; \
	else echo "clang++ not found: fuzzing skipped"; fi

demo: setup python
	$(PY) examples/demo.py

bench: setup cpp python
	$(PY) bench/run.py

clean:
	rm -rf build $(VENV)
