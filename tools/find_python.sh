#!/bin/sh
# Usage: tools/find_python.sh X.Y
#
# Prints the path of a CPython X.Y interpreter (with the GIL) that runs, as its sys.executable, so
# that a pyenv shim is replaced by the interpreter it stands for. Looks for pythonX.Y on PATH, then
# in pyenv's versions folder (${PYENV_ROOT:-~/.pyenv}/versions/X.Y.*, the newest first), then in
# /usr/local/bin and /usr/bin. A pyenv shim for a version that is not selected fails to run and is
# passed over. Prints nothing and exits 1 when no candidate runs.
set -u
want=$1
check="import sys, sysconfig
ok = sys.implementation.name == 'cpython' and '%d.%d' % sys.version_info[:2] == '$want'
print(sys.executable if ok and not sysconfig.get_config_var('Py_GIL_DISABLED') else '')"
pyenv_versions=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$want".*/bin/python"$want" 2>/dev/null |
  sort -V -r)
for candidate in "$(command -v "python$want")" $pyenv_versions \
  "/usr/local/bin/python$want" "/usr/bin/python$want"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  found=$("$candidate" -c "$check" 2>/dev/null) || continue
  if [ -n "$found" ]; then
    echo "$found"
    exit 0
  fi
done
exit 1
