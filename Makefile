# `make test` and `make demo` each prepare a fresh machine themselves: Debian packages, the
# Python environment in .venv/, the C++ build in build/cpp, and the package installed into .venv.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
JOBS ?= $(shell nproc)
# What the C++ core and the Python package build with (make demo installs only these).
APT_CORE := g++ ninja-build nlohmann-json3-dev libcli11-dev libssl-dev libxxhash-dev zlib1g-dev \
	libcurl4-openssl-dev
# What make test adds: the core's GoogleTest suite, clang for fuzzing and the lints.
APT_TEST := clang clang-format clang-tidy libclang-rt-14-dev libgtest-dev libgmock-dev
# ccache: the objects of every C++ build, kept in $(DEV_CACHE)/ccache (below).
APT_TEST += ccache
# Headless Chromium renders the HTML comparison report in python/tests/compare/.
APT_TEST += chromium
# The remote cache tests' real S3 server: a throwaway Ceph RADOS Gateway (tests/support/s3_server.py).
APT_TEST += ceph-mon ceph-osd radosgw ceph-common
# The Windows x86_64 build of the C++ core (make windows-test): mingw-w64 with POSIX threads, Wine
# to run it, the GoogleTest sources to build it for Windows, autotools' make for libsodium.
APT_TEST += g++-mingw-w64-x86-64-posix wine wine64 googletest make
APT_PACKAGES := $(APT_CORE) $(APT_TEST)
FUZZ_SECONDS ?= 60
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# What the builds and lints of make test remember between runs, outside the clone, so that a new
# clone of the same commit (CI's, say) reuses it: clang-tidy's clean results (tools/tidy_cache.py)
# and ccache's objects. Nothing in it is needed: `make test DEV_CACHE=$$(mktemp -d)` runs cold.
DEV_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tensoracle-dev
TIDY = $(PY) tools/tidy_cache.py --cache $(DEV_CACHE)/clang-tidy --jobs $(JOBS) \
	--ninja $(abspath $(VENV)/bin/ninja)
# Every CMake build that make test starts, the package's and the tests' own included, compiles
# through ccache (tools/compiler_launcher.sh: the compiler alone where ccache is missing). In a
# new clone with an empty cache it already pays: the abi3 wheel's build compiles the core and the
# command with the flags of the cp311 package's build, and takes those objects from the cache.
export CMAKE_CXX_COMPILER_LAUNCHER := $(abspath tools/compiler_launcher.sh)
export CMAKE_C_COMPILER_LAUNCHER := $(abspath tools/compiler_launcher.sh)
export CCACHE_DIR := $(DEV_CACHE)/ccache
# The Python requirements, pinned, one file per purpose (python/requirements-*.txt): build (the
# package's build tools), runtime (its dependencies and TensorRT-RTX), test, producer, docs, and
# convert (torch). requirements-dev.txt gathers all but convert.
REQUIREMENTS := $(wildcard python/requirements-*.txt)

.PHONY: test test-started check tidy-core final-group python-suite fuzz-alone bench-alone tidy-windows-alone demo setup apt apt-core venv venv-runtime cpp cpp-test python python-test lint tidy \
	fuzz bench bench-quick clean docs tensorrt-headers tensorrt-11-headers plugin-tensorrt \
	cubin-plugin wheel wheel-test gpu-check windows-test wheel-abi3 wheel-abi3-test \
	wheel-abi3-test-3.12 wheel-abi3-test-3.13 abi3-suite-3.12 abi3-suite-3.13 tidy-windows

# make test's steps, in order. Each step's end is logged (build/test-steps.log) by its
# step-done-STEP target, so that the time each took, including the prerequisites it was the first
# to need, is printed at the end with the total: CI stops a run after 90 minutes. Each step has a
# budget in minutes (STEP_BUDGET_<step>, about twice what it took on a quiet 2-CPU machine in a new
# clone with empty caches; setup's covers installing every Debian package), and so does the whole
# run (twice the 30 minutes it is meant to take); `make test` fails, naming the step, when one is
# over: a step that doubles is caught in the session that made it so, long before CI's 90-minute
# limit. A slower machine scales them all: `make test BUDGET_FACTOR=2`.
TEST_STEPS := setup cpp-test windows-test python cubin-plugin lint tidy docs wheel-test \
	wheel-abi3-test final-group
STEP_LOG := build/test-steps.log
STEP_BUDGET_setup := 15
STEP_BUDGET_cpp-test := 9
STEP_BUDGET_windows-test := 10
STEP_BUDGET_python := 5
STEP_BUDGET_cubin-plugin := 1
STEP_BUDGET_lint := 1
STEP_BUDGET_tidy := 14
STEP_BUDGET_docs := 1
STEP_BUDGET_wheel-test := 2
STEP_BUDGET_wheel-abi3-test := 5
STEP_BUDGET_final-group := 13
TEST_BUDGET := 60
BUDGET_FACTOR ?= 1
test: test-started $(addprefix step-done-,$(TEST_STEPS))
	@awk -v factor=$(BUDGET_FACTOR) -v total_budget=$(TEST_BUDGET) \
	  -v budgets="$(foreach step,$(TEST_STEPS),$(step)=$(STEP_BUDGET_$(step)))" \
	  -f tools/step_times.awk $(STEP_LOG)

test-started:
	@mkdir -p build && echo "started $$(date +%s)" > $(STEP_LOG)

# The quick loop for daily work (tools/change_check.py): builds what differs from CHECK_BASE
# (HEAD: the changes not yet committed; CHECK_BASE=main for a branch), runs the C++ and Python tests
# of the touched parts and lints the touched files. A few minutes after a make test; make test
# stays the gate.
CHECK_BASE ?= HEAD
check: setup
	$(PY) tools/change_check.py --base $(CHECK_BASE) --jobs $(JOBS)

# Not phony (make skips pattern rules for phony targets); no file of these names is ever made.
step-done-%: %
	@echo "$* $$(date +%s)" >> $(STEP_LOG)

setup: apt venv

# Installs only what is missing, so a prepared machine pays one dpkg query and nothing else.
apt_install = @dpkg -s $(1) >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(1); }
apt:
	$(call apt_install,$(APT_PACKAGES))
apt-core:
	$(call apt_install,$(APT_CORE))

# The demo's environment: the package's build tools, its dependencies and TensorRT-RTX.
venv-runtime: $(VENV)/.runtime-stamp

$(VENV)/.runtime-stamp: python/requirements-build.txt python/requirements-runtime.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r python/requirements-build.txt -r python/requirements-runtime.txt
	touch $@

# Everything make test needs. pip, not uv: this machine keeps the CPU build of torch in pip's
# find-links directory.
venv: $(VENV)/.deps-stamp

$(VENV)/.deps-stamp: $(REQUIREMENTS) | venv-runtime
	$(PY) -m pip install -q -r python/requirements-dev.txt
	$(PY) -m pip install -q -r python/requirements-convert.txt
	touch $@

# build/cpp is a Release build with warnings as errors, with the flags the package's builds
# compile the core, the deploy library and the command with (PACKAGE_BUILD_FLAGS), so that the C++
# suite tests objects compiled as the wheels' are. ccache does not share them yet: CMake picks
# c++ here and the package's build g++ (the same compiler), and ccache hashes the name; the abi3
# wheel's build does take the cp311 package's objects. The Windows build and the fuzz
# targets are RelWithDebInfo with line tables only (-g1): backtraces and sanitizer reports keep
# file and line; full -g took 1.4 times the CPU time of the same compile (9.5 s against 13.2 s for
# cache_listing_test.cpp).
RELWITHDEBINFO := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
PACKAGE_BUILD_FLAGS := --config-settings=cmake.define.TENSORACLE_WERROR=ON

# TensorRT's headers (tensorrt-11-headers) are only compiled by the tests of the deploy
# library's TensorRT adapter (cpp/tests/deploy/tensorrt_header.cmake); nothing links TensorRT.
cpp: setup tensorrt-11-headers
	$(VENV)/bin/cmake -S cpp -B build/cpp -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DTENSORACLE_WERROR=ON \
	  -DTENSORACLE_TENSORRT_HEADERS=$(abspath $(TENSORRT_11))
	$(VENV)/bin/cmake --build build/cpp -j $(JOBS)

cpp-test: cpp
	$(VENV)/bin/ctest --test-dir build/cpp --output-on-failure -j $(JOBS)

# The C++ core, its GoogleTest suite and the command cross-built for Windows x86_64 with
# mingw-w64 (cpp/cmake/mingw-w64-x86_64.cmake, warnings as errors) and run under Wine 8.0 by
# CTest, GPU tests excluded; then the command's default cache folder. Wine on Debian, not a
# Windows machine: see docs/tested-environments.md. tools/windows_prefix.sh prepares the Windows
# dependencies once (docs/wheel.md says where each comes from).
WINDOWS_PREFIX := build/windows-prefix
WINDOWS_BUILD := build/windows
WINE_ENV := WINEDEBUG=-all WINEPREFIX=$(abspath build/windows-wine)
windows-test: setup
	tools/windows_prefix.sh $(WINDOWS_PREFIX) $(abspath $(PY)) $(abspath $(VENV))/bin/cmake \
	  $(abspath $(VENV))/bin/ninja
	$(VENV)/bin/cmake -S cpp -B $(WINDOWS_BUILD) -G Ninja $(RELWITHDEBINFO) \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DTENSORACLE_WERROR=ON \
	  -DCMAKE_TOOLCHAIN_FILE=$(abspath cpp/cmake/mingw-w64-x86_64.cmake) \
	  -DTENSORACLE_WINDOWS_PREFIX=$(abspath $(WINDOWS_PREFIX)) -DTENSORACLE_INSTALL=OFF
	$(VENV)/bin/cmake --build $(WINDOWS_BUILD) -j $(JOBS)
	# Make the Wine prefix before the tests start: the first test binaries to start while Wine
	# creates it can fail without output. Wine also fails an occasional process start under load
	# (the binary exits at once, printing nothing): a test is run up to 3 times until it passes.
	$(WINE_ENV) wineboot --init >/dev/null 2>&1 && $(WINE_ENV) wineserver --wait
	$(WINE_ENV) $(VENV)/bin/ctest --test-dir $(WINDOWS_BUILD) -LE gpu --output-on-failure \
	  --repeat until-pass:3 -j $(JOBS)
	env -u XDG_CACHE_HOME $(WINE_ENV) wine $(WINDOWS_BUILD)/tensoracle.exe cache list | \
	  grep -F '.cache\\tensoracle'

# The package, built from this repository into .venv (the C++ core, the extension, the command).
install_package = $(PY) -m pip install -q --no-build-isolation --no-deps $(PACKAGE_BUILD_FLAGS) \
	./python
python: setup
	$(install_package)

python-test: python cubin-plugin
	$(MAKE) --no-print-directory python-suite
# The suite alone, on the package installed in .venv.
python-suite:
	cd python && ../$(PY) -m pytest -q

# make test's last step: the Python suite, the fuzzing, the quick benchmarks and the Windows
# sources' clang-tidy at the same time. pytest is one process and leaves the second CPU mostly
# idle (the suite took 4:52 alone, 5:52 beside the others); the fuzz targets' build and their run
# (one target at a time), the benchmarks (whose quick figures are no measurement) and clang-tidy
# take it, one after the other. Each one's output is printed whole when it ends.
final-group: python cubin-plugin setup cpp windows-test
	$(MAKE) --no-print-directory -j 2 --output-sync=target python-suite fuzz-alone bench-alone \
	  tidy-windows-alone

# The extension's stub (python/src/tensoracle/_core.pyi) is compared with one generated from the
# installed package, hence `python`; mypy is strict over the package (python/pyproject.toml).
lint: setup python
	$(VENV)/bin/ruff check python bench examples tools dev
	$(VENV)/bin/ruff format --check python bench examples tools dev
	$(PY) tools/check_stubs.py
	cd python && ../$(VENV)/bin/mypy
	find cpp -name '*.cpp' -o -name '*.hpp' | xargs clang-format --dry-run --Werror

# clang-tidy (config in .clang-tidy, findings are errors) over the core and the command (their
# Linux sources: the Windows-only ones, in windows/ and sodium/ folders, are not in build/cpp's
# compile database; tidy-windows checks them), then over
# the plugin SDK and the example plugin, configured by the example's own CMakeLists (the SDK as the
# package installs it, with TensorRT's and CUDA's headers). Through tools/tidy_cache.py: a file
# whose content, headers, compile command and configuration are those of an earlier clean analysis
# is not analysed again (the cache is in $(DEV_CACHE)/clang-tidy). Cold, the core's ~110 files
# take about 4 minutes of the 2 CPUs; after a change to one source, seconds.
PLUGIN_TIDY := build/plugin-tidy
tidy: tidy-core python plugin-tensorrt
	$(VENV)/bin/cmake -S examples/cubin_plugin -B $(PLUGIN_TIDY) -G Ninja \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
	  -DTENSORRT_ROOT=$(abspath $(PLUGIN_TENSORRT)) -DCUDAToolkit_ROOT=$(CUDA_WHEEL_ROOT) \
	  -DPython_EXECUTABLE=$(abspath $(PY)) >/dev/null
	$(TIDY) --build $(PLUGIN_TIDY) examples/cubin_plugin/plugin.cpp \
	  "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tensoracle/cpp/src/cubin_plugin.cpp"

# The core's and the command's sources alone (make check runs this after an incremental build).
tidy-core: cpp
	$(TIDY) --build build/cpp --under cpp/src --under cpp/tools

# clang-tidy, with the same .clang-tidy, over the Windows-only sources (the windows/ and sodium/
# folders of the core, the command and the tests, and any core or command source with a _WIN32
# branch), with the compile database of make windows-test's mingw-w64 build. clang parses them as
# x86_64-w64-mingw32 with the mingw-w64 headers and the libstdc++ (posix threads) GCC builds with:
# clang 14 does not find GCC's 12-posix folder itself, and the sysroot keeps out /usr/include.
MINGW_CXX_INCLUDE = $(shell x86_64-w64-mingw32-g++-posix -print-file-name=include/c++)
WINDOWS_TIDY_ARGS = --extra-arg=--target=x86_64-w64-mingw32 --extra-arg=--sysroot=/usr/x86_64-w64-mingw32 \
	$(foreach dir,$(MINGW_CXX_INCLUDE) $(MINGW_CXX_INCLUDE)/x86_64-w64-mingw32 \
	  $(MINGW_CXX_INCLUDE)/backward,--extra-arg=-stdlib++-isystem$(dir))
tidy-windows: windows-test
	$(MAKE) --no-print-directory tidy-windows-alone
tidy-windows-alone:
	{ find cpp/src cpp/tools cpp/tests -name '*.cpp' \( -path '*/windows/*' -o -path '*/sodium/*' \); \
	  grep -rl --include='*.cpp' _WIN32 cpp/src cpp/tools || true; } | sort -u | \
	  xargs $(TIDY) --build $(WINDOWS_BUILD) $(WINDOWS_TIDY_ARGS)

# The libFuzzer targets run for FUZZ_SECONDS (60 by default) when clang is available.
fuzz: setup
	$(MAKE) --no-print-directory fuzz-alone
# The fuzz targets' build and run alone.
fuzz-alone:
	@if [ ! -x cpp/fuzz/run.sh ]; then echo "no fuzz targets yet"; \
	elif command -v clang++ >/dev/null; then \
	  $(VENV)/bin/cmake -S cpp -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
	    -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) $(RELWITHDEBINFO) \
	    -DTENSORACLE_FUZZ=ON -DTENSORACLE_SANITIZE=ON -DTENSORACLE_BUILD_TESTS=OFF && \
	  $(VENV)/bin/cmake --build build/fuzz -j $(JOBS) --target tensoracle_fuzz && \
	  FUZZ_SECONDS=$(FUZZ_SECONDS) PYTHON=$(abspath $(PY)) cpp/fuzz/run.sh build/fuzz; \
	else echo "clang++ not found: fuzzing skipped"; fi

# The release wheel for CPython 3.11 (cp311-cp311, with $(PYTHON), the Python of .venv), built as
# `make python` builds the package (same build folder, so it costs little after it), checked with
# auditwheel and tagged with the manylinux policy it meets.
WHEEL_DIR := build/wheel
WHEEL_VENV := build/wheel-venv
wheel: setup
	rm -rf $(WHEEL_DIR)
	$(PY) -m pip wheel -q --no-build-isolation --no-deps $(PACKAGE_BUILD_FLAGS) \
	  -w $(WHEEL_DIR)/linux ./python
	$(PY) tools/check_wheel.py $(WHEEL_DIR)/linux/tensoracle-*.whl $(WHEEL_DIR)

# The wheel in a new virtual environment, run with only that environment on PATH.
wheel-test: wheel
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q -c python/requirements-dev.txt \
	  $(WHEEL_DIR)/tensoracle-*-manylinux_*.whl
	scratch=$$(mktemp -d) && cd $$scratch && \
	  env -i HOME=$$scratch XDG_CACHE_HOME=$$scratch/cache PATH=$(abspath $(WHEEL_VENV))/bin \
	  /bin/sh -ec 'python -c "import tensoracle, tensoracle._core as c; print(\"imported\", c.__file__)"; \
	    tensoracle cache list; tensoracle bundle inspect --help >/dev/null; \
	    echo "tensoracle bundle inspect --help: exit 0"'; \
	  status=$$?; rm -rf $$scratch; exit $$status

# The release wheel for CPython 3.12 and later: one cp312-abi3 wheel (wheel.py-api in
# python/pyproject.toml, STABLE_ABI in python/CMakeLists.txt), built with 3.12, its floor, in a
# build environment of its own with the pinned build tools, repaired and checked with auditwheel
# as the cp311 wheel is, then by tools/check_abi3.py (abi3audit: the extension imports nothing
# outside 3.12's limited API). tools/find_python.sh finds the interpreters (on PATH, else in
# pyenv's versions); PYTHON312=... and PYTHON313=... choose others.
PYTHON312 ?= $(shell tools/find_python.sh 3.12)
PYTHON313 ?= $(shell tools/find_python.sh 3.13)
ABI3_DIR := build/wheel-abi3
ABI3_BUILD_VENV := build/wheel-abi3-build
ABI3_WHEEL = $(ABI3_DIR)/tensoracle-*-cp312-abi3-manylinux_*.whl
need_python = @test -n "$(1)" || { echo "CPython $(2) not found on PATH nor in pyenv's versions:" \
	"install it (pyenv install $(2)) or set PYTHON$(subst .,,$(2))=/path/to/python$(2)" >&2; exit 1; }
wheel-abi3: setup
	$(call need_python,$(PYTHON312),3.12)
	rm -rf $(ABI3_DIR) $(ABI3_BUILD_VENV)
	$(PYTHON312) -m venv $(ABI3_BUILD_VENV)
	$(ABI3_BUILD_VENV)/bin/python -m pip install -q -r python/requirements-build.txt
	$(ABI3_BUILD_VENV)/bin/python -m pip wheel -q --no-build-isolation --no-deps $(PACKAGE_BUILD_FLAGS) \
	  -w $(ABI3_DIR)/linux ./python
	$(PY) tools/check_wheel.py $(ABI3_DIR)/linux/tensoracle-*.whl $(ABI3_DIR)
	$(PY) tools/check_abi3.py $(ABI3_WHEEL)

# The abi3 wheel on CPython 3.12 and on 3.13: each in a new virtual environment of that
# interpreter with the test dependencies of python/requirements-dev.txt, then a part of the Python
# suite (ABI3_SUITE) run from python/tests; --installed-package fails the run unless `import
# tensoracle` is the installed wheel (python/tests/support/installed_package.py). The whole suite
# runs once, in make python-test (3.11). What 3.12 and 3.13 can change is the extension's binding
# layer under the limited API, the interpreter under the package's Python, and the third-party
# wheels of those interpreters; ABI3_SUITE reaches each of the extension's binding files
# (cpp/bindings/: the store, locks and identities; refusals turned into the 1.x exceptions;
# condition differences; comparison; bundles and plugin libraries' exports; the deployed open
# and its streamed reads into Python buffers; signatures and the remote cache's receiver against
# the suite's S3 server; GPU properties), every public name of the API, a real engine built and
# reopened through the interpreter's TensorRT-RTX bindings, the command line and the import
# graph. Run whole on both interpreters it took 4:53 of make test (2 CPUs); ABI3_SUITE=. runs
# it whole. torch, which `make venv` adds for 3.11 (the CPU build kept on this machine), is not
# installed: PyPI's torch 2.13.0 for 3.12 and 3.13 is the CUDA build, which requires triton 3.7.1
# against the pinned 3.8.0. wheel-abi3-test runs the two interpreters at the same time (each is
# one pytest process, mostly on one CPU), each one's output printed whole when it ends.
ABI3_SUITE ?= test_api_conformance.py test_import_graph.py cache/test_store.py \
	cache/test_hostile_bytes.py cache/test_rebuild_reason.py cache/test_remote_streamed.py \
	compare/test_compare.py cubin/test_bundle.py engine/test_plugins.py \
	engine/test_open_deployed.py engine/test_streamed_plan.py engine/test_gpu.py \
	engine/test_engine.py execution/test_io_table.py cli/test_cli_cache.py
ABI3_TEST_VENV := build/wheel-abi3-venv
define test_abi3_wheel
$(call need_python,$(1),$(2))
rm -rf $(ABI3_TEST_VENV)-$(2)
$(1) -m venv $(ABI3_TEST_VENV)-$(2)
$(ABI3_TEST_VENV)-$(2)/bin/python -m pip install -q -r python/requirements-dev.txt $(ABI3_WHEEL)
cd python/tests && ../../$(ABI3_TEST_VENV)-$(2)/bin/python -m pytest -q --installed-package \
  -m "not toolchain" $(ABI3_SUITE)
endef
wheel-abi3-test: wheel-abi3 cubin-plugin
	$(MAKE) --no-print-directory -j 2 --output-sync=target abi3-suite-3.12 abi3-suite-3.13
wheel-abi3-test-3.12: wheel-abi3 cubin-plugin
	$(MAKE) --no-print-directory abi3-suite-3.12
wheel-abi3-test-3.13: wheel-abi3 cubin-plugin
	$(MAKE) --no-print-directory abi3-suite-3.13
# The suites alone, on the wheel wheel-abi3 built.
abi3-suite-3.12:
	$(call test_abi3_wheel,$(PYTHON312),3.12)
abi3-suite-3.13:
	$(call test_abi3_wheel,$(PYTHON313),3.13)

# On a machine with an NVIDIA GPU: every GPU test, the documentation examples and the GPU
# benchmarks, written to one Markdown report (see docs/tested-environments.md). Extra options of
# tools/gpu-check go in GPU_CHECK_ARGS.
gpu-check: setup cpp python
	$(PY) tools/gpu_check --use-current-env --cpp-build build/cpp $(GPU_CHECK_ARGS)

# Only what the demo uses: the core's build dependencies, the package and TensorRT-RTX.
demo: apt-core venv-runtime
	$(PY) -m pip install -q --no-build-isolation --no-deps ./python
	$(PY) examples/demo.py

bench: setup cpp python
	$(PY) bench/run.py

# Every benchmark in its quick mode (small sizes, one repeat): make test runs it so that a broken
# benchmark fails the tests; its figures are not the benchmarks' results.
bench-quick: setup cpp python
	$(MAKE) --no-print-directory bench-alone
bench-alone:
	$(PY) bench/run.py --quick

# The documentation site (mkdocs.yml, docs/), built strictly: a broken link or anchor fails.
docs: venv
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

clean:
	rm -rf build $(VENV)

# TensorRT 10.14.1 C++ headers (Apache-2.0) for the plugin builds: the PyPI wheel kernel-lens
# ships them in kernel_lens/include/tensorrt/. The wheel is fetched by its SHA-256, never
# installed, and only that folder is unpacked, as build/tensorrt-sdk/include.
TENSORRT_SDK := build/tensorrt-sdk
TENSORRT_HEADERS_WHEEL := kernel-lens==2.0.1 \
	--hash=sha256:07cc714e8b5e7f34b672f7c7fad93febe7c747be5837ba276b1527370134ffe0
CUDA_WHEEL_ROOT = $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia/cu13
CUBIN_PLUGIN := build/cubin-plugin
# TensorRT 11.0 and 11.1 C++ headers (Apache-2.0, from NVIDIA's open-source repository): fetched
# at the commits of their releases, every file checked against its SHA-256 in
# tools/tensorrt-headers.json, into build/tensorrt-headers/<version>/include. Where there is no
# internet access, TENSORRT_HEADERS=DIR names a local copy (DIR/<version>/include/NvInfer.h), which
# is checked the same way. The example plugin and the registry probe build against 11.1.
TENSORRT_HEADERS ?=
TENSORRT_11 := build/tensorrt-headers
TENSORRT_11_HEADERS := $(TENSORRT_11)/11.1.0.106/include
tensorrt-11-headers: | venv-runtime
	$(PY) tools/tensorrt_headers.py --dest $(TENSORRT_11) \
	  $(if $(TENSORRT_HEADERS),--local $(abspath $(TENSORRT_HEADERS)))

# A TensorRT SDK folder for the plugin builds: the 11.1 headers, and as the TensorRT library to
# link, the 11.4 lean runtime of the PyPI wheel (real TensorRT 11 code; the plugin calls none of
# its functions, so the linker records no dependency on it).
PLUGIN_TENSORRT := build/tensorrt-sdk-11

tensorrt-headers: $(TENSORRT_SDK)/include/NvInferRuntime.h

$(TENSORRT_SDK)/include/NvInferRuntime.h: | venv
	rm -rf $(TENSORRT_SDK) $(TENSORRT_SDK).tmp && mkdir -p $(TENSORRT_SDK).tmp/wheel
	echo "$(TENSORRT_HEADERS_WHEEL)" > $(TENSORRT_SDK).tmp/requirements.txt
	$(PY) -m pip download -q --no-deps --require-hashes --only-binary=:all: \
	  -r $(TENSORRT_SDK).tmp/requirements.txt -d $(TENSORRT_SDK).tmp/wheel
	$(PY) tools/unpack_tensorrt_headers.py $(TENSORRT_SDK).tmp/wheel $(TENSORRT_SDK).tmp/include
	rm -rf $(TENSORRT_SDK).tmp/wheel && mv $(TENSORRT_SDK).tmp $(TENSORRT_SDK)

plugin-tensorrt: tensorrt-11-headers | venv
	rm -rf $(PLUGIN_TENSORRT) && mkdir -p $(PLUGIN_TENSORRT)/lib
	ln -s $(abspath $(TENSORRT_11_HEADERS)) $(PLUGIN_TENSORRT)/include
	ln -s $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tensorrt_lean_libs/libnvinfer_lean.so.11 \
	  $(PLUGIN_TENSORRT)/lib/libnvinfer_lean.so

# The example plugin package (examples/cubin_plugin) built into a wheel against the installed
# tensoracle's C++ sources, and the registry probe (cpp/plugin/tests) the plugin tests run.
cubin-plugin: python tensorrt-headers plugin-tensorrt
	rm -rf $(CUBIN_PLUGIN)/dist
	# The README's build command, as written there.
	$(PY) tools/markdown_block.py examples/cubin_plugin/README.md build-wheel | \
	  PATH=$(abspath $(VENV))/bin:$$PATH TENSORRT_ROOT=$(abspath $(PLUGIN_TENSORRT)) \
	  CUDAToolkit_ROOT=$(CUDA_WHEEL_ROOT) bash -eux
	$(VENV)/bin/cmake -S cpp/plugin/tests -B $(CUBIN_PLUGIN)/probe -G Ninja \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTENSORRT_ROOT=$(abspath $(PLUGIN_TENSORRT)) -DCUDAToolkit_ROOT=$(CUDA_WHEEL_ROOT)
	$(VENV)/bin/cmake --build $(CUBIN_PLUGIN)/probe -j $(JOBS)
