#!/usr/bin/env bash
# Follow-up checks on a GPU machine without network access, in two calls (what one call may
# carry is too small for the TensorRT-RTX libs wheel and the rest together):
#   tools/device_followup.sh native CARRIED BUILD OUT
#     the C++ GPU tests (`ctest -L gpu` in BUILD, a CMake build of cpp/ configured at that very
#     path) and tensoracle.gpu.properties() through Python. CARRIED holds bundle/ (the example
#     cubin bundle), lib/ (fallback shared libraries), a cp312 tensoracle wheel and libs.partA
#     (the first bytes of the TensorRT-RTX libs wheel, left there for the next call).
#   tools/device_followup.sh python CARRIED PART_A OUT [PYTEST ARGS...]
#     installs TensorRT-RTX (PART_A + CARRIED/rtx/libs.partB, the frontend and bindings wheels)
#     and the tensoracle wheel, copies CARRIED/tensoracle (the CLI) beside python3, runs
#     tools/device_open_engine.py, then pytest over tree/python: without PYTEST ARGS first
#     test_backends.py alone in one process, then the whole suite.
# Logs go to OUT.
set -u -o pipefail
phase=$1 carried=$(cd "$2" && pwd)
shift 2
site=/tmp/site
mkdir -p "$site"
export PYTHONPATH=$site PYTHONUNBUFFERED=1
fallback=/tmp/fallback-lib
mkdir -p "$fallback"
for library in libcrypto.so.3 libelf.so.1; do
  ldconfig -p | grep -q "$library " || cp "$carried/lib/$library" "$fallback/"
done
export LD_LIBRARY_PATH=$fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "$phase" = native ]; then
  build=$(cd "$1" && pwd) out=$2
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" "$carried"/tensoracle-*.whl || exit 3
  ctest=$(dirname "$(command -v python3)")/ctest
  [ -x "$ctest" ] || ctest=ctest
  {
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
    uname -r
    python3 --version
    echo "fallback libraries used: $(ls "$fallback")"
    echo "--- ctest -L gpu ($("$ctest" --version | head -1))"
    (cd "$build" && TENSORACLE_CUBIN_BUNDLE="$carried/bundle" timeout 120 "$ctest" -L gpu \
      --output-on-failure -V)
    echo "--- tensoracle.gpu.properties() through Python"
    timeout 60 python3 -c 'import json, tensoracle
print(json.dumps(tensoracle.gpu.properties(), indent=2))
print("absent_reason:", tensoracle.gpu.absent_reason())'
  } 2>&1 | tee "$out/native.log"
  exit
fi
part_a=$1 out=$2
shift 2
libs=/tmp/tensorrt_rtx_cu13_libs-1.7.1.116-py3-none-manylinux_2_28_x86_64.whl
cat "$part_a" "$carried"/rtx/libs.partB >"$libs" || exit 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$site" "$libs" "$carried"/rtx/tensorrt_rtx_cu13*.whl "$carried"/tensoracle-*.whl ||
  exit 3
cp -r "$carried"/tree/python/src/tensoracle/. "$site"/tensoracle/ # current Python sources
# The CLI tests look for `tensoracle` beside sys.executable, where a normal install puts it.
cp "$carried/tensoracle" "$(dirname "$(command -v python3)")/tensoracle" || exit 3
{
  python3 -c 'import tensorrt_rtx, numpy, pytest, xdist, pytest_timeout
print("tensorrt_rtx", tensorrt_rtx.__version__, "numpy", numpy.__version__,
"pytest", pytest.__version__, "xdist", xdist.__version__)'
  echo "--- tools/device_open_engine.py"
  timeout 120 python3 "$carried/tree/tools/device_open_engine.py" "$carried/tensoracle"
} 2>&1 | tee "$out/open_engine.log"
if [ $# -eq 0 ]; then
  # test_backends.py alone, in collection order and in one process, as the first device run
  # had it when one of its tests stalled.
  (cd "$carried/tree/python" && timeout 150 python3 -m pytest -p no:xdist --timeout=60 \
    --timeout-method=thread -p no:cacheprovider -rA tests/test_backends.py) 2>&1 |
    tee "$out/backends.log"
  set -- tests
fi
# Eight xdist workers; a test that outlasts 60 s has its stacks dumped (faulthandler) and its
# worker ended (pytest-timeout's thread method, which also stops a hang inside native code);
# xdist reports it as failed and starts a new worker, so every other result still comes back.
(cd "$carried/tree/python" && time timeout 400 python3 -m pytest -n 8 --timeout=60 \
  --timeout-method=thread -o faulthandler_timeout=55 -p no:cacheprovider -rA "$@") 2>&1 |
  tee "$out/log"
