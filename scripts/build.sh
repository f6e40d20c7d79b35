#!/usr/bin/env bash
# Builds both trees: native (build/native: tests, CLI) and WebAssembly (build/wasm -> dist/:
# the single-threaded build, and the threaded one in dist/mt/, each also as a relaxed-SIMD
# .wasm: cmake/wasm-fma.cmake).
# Installs what is missing first (scripts/setup.sh). Incremental: a second run is quick.
# Warnings are errors: the toolchain is Debian 12's, the same everywhere this builds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NODE_PATH=/usr/share/nodejs   # emcc needs Debian's acorn at -O2/-O3 (docs/contributing.md)
jobs=$(nproc 2>/dev/null || echo 2)

echo "build: native tree (build/native)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DWT_WERROR=ON >/dev/null
cmake --build build/native -j"$jobs"

echo "build: WebAssembly tree (build/wasm -> dist/)"
if [ ! -f build/wasm/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DWT_WERROR=ON \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node;--no-experimental-fetch" >/dev/null
fi
cmake --build build/wasm -j"$jobs"
node scripts/embed_wgsl.mjs   # the WebGPU backend's WGSL programs -> dist/webtrain-wgsl.js
echo "build: ok ($(du -h dist/webtrain-core.wasm | cut -f1) dist/webtrain-core.wasm, $(du -h dist/mt/webtrain-core-mt.wasm | cut -f1) dist/mt/webtrain-core-mt.wasm: threaded; *-fma.wasm beside each: relaxed SIMD)"
