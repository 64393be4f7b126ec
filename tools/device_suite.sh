#!/usr/bin/env bash
# Runs tensoracle's tests and engine benchmarks on a GPU machine without network access.
# Usage: tools/device_suite.sh CARRIED OUT [PYTEST ARGS...], where CARRIED holds the TensorRT-RTX wheels (the libs
# wheel as parts libs.part*), a cp312 tensoracle wheel, lib/ (fallback shared libraries) and
# tree/ (python/, docs/, bench/ of the checkout under test). Logs go to OUT.
# With PYTEST ARGS only those tests run (with a per-test timeout) and the benchmarks are left out.
set -u -o pipefail
carried=$1 out=$2
shift 2
libs=/tmp/tensorrt_rtx_cu13_libs-1.7.1.116-py3-none-manylinux_2_28_x86_64.whl
cat "$carried"/../libs1/libs.part* "$carried"/libs.part* >"$libs" || exit 3
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "$libs" "$carried"/tensorrt_rtx_cu13*.whl "$carried"/tensoracle-*.whl || exit 3
cp -r "$carried"/tree/python/src/tensoracle/. /tmp/site/tensoracle/  # current Python sources
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
ldconfig -p | grep -q 'libcrypto.so.3 ' || export LD_LIBRARY_PATH="$carried/lib"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  python3 --version
  python3 -c 'import tensorrt_rtx, cupy, numpy; print("tensorrt_rtx", tensorrt_rtx.__version__,
"cupy", cupy.__version__, "numpy", numpy.__version__)'
} 2>&1 | tee "$out/versions.log"
if [ $# -gt 0 ]; then
  (cd "$carried/tree/python" && timeout 200 python3 -m pytest -v -p no:cacheprovider -rs \
    --timeout 40 "$@") 2>&1 | tee "$out/pytest.log"
  exit
fi
(cd "$carried/tree/python" && timeout 300 python3 -m pytest -q -p no:cacheprovider -rs tests) \
  2>&1 | tee "$out/pytest.log"
cd "$carried/tree" || exit 3
timeout 60 python3 bench/enqueue.py 2>&1 | tee "$out/bench-enqueue.log"
timeout 180 python3 bench/open_engine_gpu.py 2>&1 | tee "$out/bench-open.log"
