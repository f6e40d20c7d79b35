#!/usr/bin/env bash
# Every test, bottom up (docs/contributing.md, Tests): native unit + ONNX node tests (also at 1 and 4
# threads), the same under ThreadSanitizer at 2 threads and under AddressSanitizer +
# UndefinedBehaviorSanitizer with warnings as errors, the ONNX node tests
# and PyTorch forward vectors in WebAssembly under Node (on the SIMD128 and the relaxed-SIMD
# builds), then the JavaScript tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== native: unit tests and ONNX node tests (ctest)"
(cd build/native && ctest -j"$jobs" --output-on-failure | grep -Ev '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed')

echo "== native at 1 and 4 threads (WT_THREADS; the run above used the machine's cores)"
for t in 1 4; do
  (cd build/native && WT_THREADS=$t ctest -j"$jobs" --output-on-failure | grep -Ev '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed')
done

echo "== native under ThreadSanitizer at 2 threads, -Werror (build/tsan)"
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWT_TSAN=ON -DWT_WERROR=ON >/dev/null
cmake --build build/tsan -j"$jobs"
(cd build/tsan && WT_THREADS=2 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
   ctest -j"$jobs" --output-on-failure | grep -Ev '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed')

echo "== native under ASan + UBSan, -Werror (build/sanitize)"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DWT_SANITIZE=ON -DWT_WERROR=ON >/dev/null
cmake --build build/sanitize -j"$jobs"
(cd build/sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest -j"$jobs" --output-on-failure | grep -Ev '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed')

echo "== wasm: ONNX node tests (allowlist)"
node tests/onnx/run.mjs --allowlist tests/onnx/allowlist.txt | grep -v '^ok '

echo "== wasm: PyTorch forward vectors (tests/golden/cases/*/forward)"
node tests/onnx/run.mjs tests/golden/cases/*/forward

echo "== wasm: training golden vectors vs PyTorch (tests/golden/cases, tests/golden/cases-models)"
node tests/golden/run.mjs tests/golden/cases/*/ tests/golden/cases-models/*/

echo "== webgpu (Node's webgpu package; SwiftShader without a GPU): training golden vectors vs PyTorch"
node tests/golden/run.mjs --backend webgpu tests/golden/cases/*/ tests/golden/cases-models/*/

echo "== wasm, relaxed-SIMD (FMA) build (Node's --experimental-wasm-relaxed-simd): ONNX node tests, forward vectors, training golden vectors"
relaxed() {
  local out
  out=$(node --experimental-wasm-relaxed-simd "$@") || { echo "$out" | grep -v '^ok '; return 1; }
  echo "$out" | grep -v '^ok '
  echo "$out" | tail -1 | grep -q '(wasm-relaxed-simd)$' || { echo "not run on the relaxed-SIMD build"; return 1; }
}
relaxed tests/onnx/run.mjs --allowlist tests/onnx/allowlist.txt
relaxed tests/onnx/run.mjs tests/golden/cases/*/forward
relaxed tests/golden/run.mjs tests/golden/cases/*/ tests/golden/cases-models/*/

echo "== JavaScript tests (node --test)"
node --test tests/js/

echo "== browser tests (headless Chromium: IndexedDB, worker, crash during save, entry, the demo, the packed package in Vite, esbuild and webpack pages)"
node --test tests/browser/
