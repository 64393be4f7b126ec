#!/usr/bin/env bash
# Prepares PREFIX, the folder of Windows x86_64 dependencies that the mingw-w64 build of the C++
# core (cpp/cmake/mingw-w64-x86_64.cmake) finds its packages in:
#   - nlohmann-json, CLI11 and xxHash: links to the headers and CMake files of Debian's
#     header-only packages (nlohmann-json3-dev, libcli11-dev, libxxhash-dev), used as they are;
#   - GoogleTest: built with mingw-w64 from Debian's source package (googletest, /usr/src/googletest);
#   - libsodium (Ed25519 on Windows): built with mingw-w64 from the libsodium source tree that the
#     PyNaCl sdist on PyPI ships, downloaded by its pinned SHA-256 and never installed.
# Usage: tools/windows_prefix.sh PREFIX PYTHON CMAKE NINJA. A PREFIX already complete (its stamp
# file names this script's inputs) is left as it is.
set -euo pipefail
mkdir -p "$(dirname "$1")"
prefix=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") python=$2 cmake=$3 ninja=$4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
toolchain=$repo/cpp/cmake/mingw-w64-x86_64.cmake
pynacl="pynacl==1.6.2 --hash=sha256:018494d6d696ae03c7e656e5e74cdfd8ea1326962cc401bcf018f1ed8436811c"
stamp_text="$pynacl googletest $(dpkg-query -W -f='${Version}' googletest) $(sha256sum "$0" "$toolchain" | cut -c1-64 | tr '\n' ' ')"
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp_text" ]; then
    exit 0
fi
rm -rf "$prefix" "$prefix.tmp"
work=$prefix.tmp
mkdir -p "$work/include" "$work/share/cmake" "$work/src"
jobs=$(nproc)

# Header-only packages: the Debian files themselves, seen through links.
ln -s /usr/include/nlohmann "$work/include/nlohmann"
ln -s /usr/include/CLI "$work/include/CLI"
ln -s /usr/include/xxhash.h "$work/include/xxhash.h"
mkdir -p "$work/share/cmake/nlohmann_json" "$work/share/cmake/CLI11"
for file in /usr/share/cmake/nlohmann_json/*.cmake; do
    ln -s "$file" "$work/share/cmake/nlohmann_json/$(basename "$file")"
done
for file in /usr/share/cmake/CLI11/*.cmake; do
    ln -s "$file" "$work/share/cmake/CLI11/$(basename "$file")"
done

# GoogleTest from Debian's sources.
"$cmake" -S /usr/src/googletest -B "$work/src/googletest" -G Ninja \
    -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DTENSORACLE_WINDOWS_PREFIX="$work" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$work" -Wno-dev >/dev/null
"$cmake" --build "$work/src/googletest" -j "$jobs" >/dev/null
"$cmake" --install "$work/src/googletest" >/dev/null

# libsodium from the PyNaCl sdist (verified by its SHA-256).
echo "$pynacl" > "$work/src/requirements.txt"
"$python" -m pip download -q --no-deps --no-binary=:all: --require-hashes \
    -r "$work/src/requirements.txt" -d "$work/src/sdist"
tar -xzf "$work"/src/sdist/pynacl-*.tar.gz -C "$work/src"
sodium=$(echo "$work"/src/pynacl-*/src/libsodium)
(cd "$sodium" && ./configure -q --host=x86_64-w64-mingw32 --disable-shared --enable-static \
    --disable-dependency-tracking --prefix="$work" >/dev/null && make -s -j "$jobs" install >/dev/null)

rm -rf "$work/src"
echo "$stamp_text" > "$work/.stamp"
mv "$work" "$prefix"
