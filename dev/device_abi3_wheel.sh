#!/usr/bin/env bash
# On a GPU machine, offline: the cp312-abi3 wheel installed into a new virtual environment of each
# CPython 3.12 and 3.13 found on PATH, from a folder of wheels (no index), then, in each one: pip
# show and the installed wheel's tag, the import of tensoracle._core and the GPU description,
# `pytest -m gpu` and the engine tests of the earlier H200 runs from python/tests with
# --installed-package, `tensoracle doctor` and `tensoracle cache list` of the installed command,
# dev/device_open_engine.py, and, where FOLDER is given (made by
# `dev/device_portable_engines.py build FOLDER` on a machine without a GPU), its probe.
#
# Usage: dev/device_abi3_wheel.sh WHEELHOUSE [FOLDER]
#   WHEELHOUSE holds tensoracle-*-cp312-abi3-*.whl, TensorRT-RTX's three wheels and the test
#   dependencies (pytest, hypothesis, ml_dtypes, xxhash, pytest-timeout and what they need), all
#   for the interpreters found (cp312 wheels serve 3.12 only).
# Prints every command before its output; a failing step is reported and the next one runs. Exits
# 1 when a step failed, 0 otherwise.
set -u
wheelhouse=$(cd "$1" && pwd)
portable=${2:+$(cd "$2" && pwd)}
checkout=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tensoracle-abi3-XXXXXX")
failed=0
# The remote cache's test modules import obstore (tensoracle[remote]) and have no GPU tests; the
# producer's tests skip with TENSORACLE_TESTS_WITHOUT_PRODUCER=1 (Triton is not installed).
no_remote=(--ignore=cache/test_remote_cache.py --ignore=cache/test_remote_streamed.py
  --ignore=cli/test_build_command.py --ignore=cli/test_cli_cache_remote.py)

run() {
  echo "\$ $*"
  "$@"
  local status=$?
  echo "(exit $status)"
  [ "$status" = 0 ] || failed=1
  echo
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r)," \
  "$(ldd --version | head -1)"
run nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
echo "# wheelhouse (SHA-256):"
(cd "$wheelhouse" && sha256sum -- *.whl)
echo

found=0
for version in 3.12 3.13; do
  python=$(command -v "python$version") || { echo "# CPython $version: not on PATH, not tested"; echo; continue; }
  found=1
  venv=$work/venv-$version
  echo "######## CPython $version ($python)"
  run "$python" -c 'import sys; print(sys.version); print("base prefix", sys.base_prefix)'
  run "$python" -m venv "$venv"
  py=$venv/bin/python
  run "$py" -m pip install --no-index --no-cache-dir --find-links "$wheelhouse" \
    'tensoracle[rtx]==1.7.0' pytest hypothesis ml_dtypes xxhash pytest-timeout
  run "$py" -m pip show tensoracle
  run "$py" -m pip list
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  run cat "$site/tensoracle-1.7.0.dist-info/WHEEL"
  run "$py" -c 'import sys, packaging.tags as t; print("interpreter tags include cp312-abi3-manylinux_2_34_x86_64:",
    any(str(x) == "cp312-abi3-manylinux_2_34_x86_64" for x in t.sys_tags()))'
  run "$py" -c 'import json, tensoracle, tensoracle._core as core
from importlib.metadata import version
print("tensoracle", version("tensoracle"), tensoracle.__file__)
print("extension", core.__file__)
print("gpu.properties():", json.dumps(tensoracle.gpu.properties(), sort_keys=True))
print("gpu.absent_reason():", tensoracle.gpu.absent_reason())
backend = tensoracle.backend(); print("backend", backend.name, backend.version)'
  run env -C "$checkout/python/tests" TENSORACLE_TESTS_WITHOUT_PRODUCER=1 "$py" -m pytest \
    -p no:cacheprovider --installed-package --timeout=300 -m gpu -v -rs "${no_remote[@]}"
  run env -C "$checkout/python/tests" "$py" -m pytest -p no:cacheprovider --installed-package \
    --timeout=300 -q -rs cache/test_compatibility.py engine/test_portable_engines.py \
    engine/test_engine.py engine/test_backends.py
  cache=$work/xdg-$version
  mkdir -p "$cache"
  run env XDG_CACHE_HOME="$cache" PATH="$venv/bin:$PATH" tensoracle doctor
  run env XDG_CACHE_HOME="$cache" PATH="$venv/bin:$PATH" tensoracle cache list
  run env PYTHONUNBUFFERED=1 "$py" "$checkout/dev/device_open_engine.py" "$venv/bin/tensoracle"
  if [ -n "$portable" ]; then
    copy=$work/portable-$version
    cp -r "$portable" "$copy"
    run env PYTHONUNBUFFERED=1 "$py" "$checkout/dev/device_portable_engines.py" probe "$copy"
    run env XDG_CACHE_HOME="$copy/xdg" "$venv/bin/tensoracle" cache list --format table
  fi
done
[ "$found" = 1 ] || failed=1
echo "# done: $([ "$failed" = 0 ] && echo 'every step exited 0' || echo 'a step failed')"
exit "$failed"
