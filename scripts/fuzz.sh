#!/usr/bin/env bash
# libFuzzer targets (tests/fuzz/fuzz_*.c) over the native core, with ASan + UBSan.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   build, seed, then fuzz each target
#   bash scripts/fuzz.sh --build-only                       build the targets and seed corpora only
#   bash scripts/fuzz.sh --repro TARGET FILE...             run a target once on the given files
#
# Standalone clang build (no CMake): src/ + the protobuf-c runtime + the target, compiled with
# -fsanitize=fuzzer,address,undefined into build/fuzz/. Seed corpora come from the repository's
# own models and checkpoints (tests/golden/cases, tests/data/ort-mnist, build/onnx-node-tests,
# and artifacts generated from the golden models) into build/fuzz/corpus/<target>; libFuzzer
# keeps growing those directories across runs. Crashes, leaks, timeouts and OOMs are saved as
# build/fuzz/crashes/<target>/{crash,leak,timeout,oom}-* (reproduce with --repro); the script
# then exits 1. Targets run two at a time, one fuzzing process each (FUZZ_PARALLEL=1: one at a
# time, for a 1-core share of the machine). FUZZ_KEEP_GOING=1 uses libFuzzer's fork mode to go on
# after a finding, saving every one. Logs: build/fuzz/logs/<target>.log (last status line:
# "#<execs>: cov: <edges> ft: <features> corp: <units>").
# Needs clang 14 and libclang-rt-14-dev (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/build/fuzz"
CC=${CC_FUZZ:-clang}
TARGETS_ALL=(fuzz_onnx_load fuzz_checkpoint fuzz_artifacts fuzz_train_step fuzz_external fuzz_adapter fuzz_model_scan)
PARALLEL=${FUZZ_PARALLEL:-2}

mode=run
secs=60
targets=()
case "${1:-}" in
  --build-only) mode=build; shift ;;
  --repro) mode=repro; shift ;;
  '' ) ;;
  *) secs=$1; shift ;;
esac

if ! command -v "$CC" >/dev/null; then
  echo "fuzz.sh: $CC not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

# ---- build -------------------------------------------------------------------------------
PB_DIR="$ROOT/build/third_party/protobuf-c"
mkdir -p "$OUT/gen" "$OUT/obj" "$OUT/bin"
CFLAGS=(-g -O1 -std=gnu11 -fno-omit-frame-pointer
        -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
        -I"$ROOT/src" -I"$ROOT/include" -I"$OUT/gen")
LIBS=(-lm)
if [[ -f "$PB_DIR/src/protobuf-c.c" ]]; then
  CFLAGS+=(-I"$PB_DIR/include" -I"$PB_DIR/include/protobuf-c")
  PB_SRC="$PB_DIR/src/protobuf-c.c"
else
  PB_SRC=""
  LIBS+=(-lprotobuf-c)   # Debian's libprotobuf-c-dev (same 1.4.1 runtime)
fi

if [[ ! -f "$OUT/gen/onnx.pb-c.c" || "$ROOT/schemas/onnx.proto" -nt "$OUT/gen/onnx.pb-c.c" ]]; then
  protoc-c --c_out="$OUT/gen" -I"$ROOT/schemas" "$ROOT/schemas/onnx.proto"
fi

mapfile -t SRCS < <(ls src/base/*.c src/ir/*.c src/io/*.c src/ops/*.c src/backend/*.c src/backend/cpu/*.c src/backend/webgpu/*.c \
                       src/runtime/*.c src/grad/*.c src/shape/*.c src/autodiff/*.c src/artifacts/*.c)
SRCS+=("$OUT/gen/onnx.pb-c.c")
[[ -n "$PB_SRC" ]] && SRCS+=("$PB_SRC")

# Rebuild everything when any header changed after the last build; otherwise only the .c
# files newer than their objects.
stamp="$OUT/obj/.stamp"
force=0
if [[ ! -f "$stamp" ]] || [[ -n "$(find src include tests/fuzz -name '*.h' -newer "$stamp" | head -1)" ]]; then
  force=1
fi
todo=()
objs=()
for s in "${SRCS[@]}"; do
  o="$OUT/obj/$(echo "${s#"$ROOT/"}" | tr '/' '_').o"
  objs+=("$o")
  if [[ $force = 1 || ! -f "$o" || "$s" -nt "$o" ]]; then todo+=("$s|$o"); fi
done
if ((${#todo[@]})); then
  echo "fuzz.sh: compiling ${#todo[@]} files"
  printf '%s\n' "${todo[@]}" | xargs -P"$(nproc)" -I{} bash -c \
    'src="${1%%|*}"; obj="${1##*|}"; shift; extra=()
     # protobuf-c 1.4.1 (not ours): parse_tag_and_wiretype shifts into the sign bit on 5-byte
     # tags, and packed repeated fields add 0 to a NULL array: benign, so not reported
     [[ $src == */protobuf-c.c ]] && extra=(-fno-sanitize=shift-base,pointer-overflow)
     "$@" "${extra[@]}" -w -c "$src" -o "$obj"' _ {} "$CC" "${CFLAGS[@]}"
fi
touch "$stamp"
rm -f "$OUT/libwt_fuzz.a"
ar rcs "$OUT/libwt_fuzz.a" "${objs[@]}"

for t in "${TARGETS_ALL[@]}" fuzz_seedgen; do
  src="tests/fuzz/$t.c"
  [[ $t = fuzz_seedgen ]] && src="tests/fuzz/seedgen.c"
  bin="$OUT/bin/$t"
  if [[ ! -x "$bin" || "$src" -nt "$bin" || "$OUT/libwt_fuzz.a" -nt "$bin" || tests/fuzz/fuzz_common.h -nt "$bin" ]]; then
    if [[ $t = fuzz_seedgen ]]; then
      "$CC" "${CFLAGS[@]/fuzzer-no-link,/}" -Itests/fuzz "$src" "$OUT/libwt_fuzz.a" \
        -fsanitize=address,undefined "${LIBS[@]}" -o "$bin"
    else
      "$CC" "${CFLAGS[@]}" -Itests/fuzz "$src" "$OUT/libwt_fuzz.a" \
        -fsanitize=fuzzer,address,undefined "${LIBS[@]}" -o "$bin"
    fi
  fi
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
FUZZ_FLAGS=(-rss_limit_mb=3072 -malloc_limit_mb=1500 -timeout=30 -max_len=262144
            -print_final_stats=1)
# FUZZ_KEEP_GOING=1: fork mode, keep fuzzing after a crash/timeout/OOM (every finding is saved)
if [[ ${FUZZ_KEEP_GOING:-0} = 1 ]]; then
  FUZZ_FLAGS+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi

if [[ $mode = repro ]]; then
  t=$1; shift
  exec "$OUT/bin/$t" -rss_limit_mb=3072 -malloc_limit_mb=1500 -timeout=30 "$@"
fi

# ---- seed corpora --------------------------------------------------------------------------
C="$OUT/corpus"
mkdir -p "$C"/{fuzz_onnx_load,fuzz_checkpoint,fuzz_artifacts,fuzz_train_step,fuzz_external,fuzz_adapter,fuzz_model_scan}
if [[ ! -f "$C/.seeded" ]]; then
  echo "fuzz.sh: seeding corpora"
  # large files (the 400 KB MLPs, the 1.5 MB checkpoint) only slow the fuzzers down
  mapfile -t seeds < <(find tests/golden/cases -name model.onnx -size -256k; \
                       find tests/data/ort-mnist -type f ! -name '*.md' -size -256k; \
                       ls tests/data/half-mlp*.onnx; \
                       [[ -d build/onnx-node-tests ]] && find build/onnx-node-tests -name model.onnx -size -64k)
  "$OUT/bin/fuzz_seedgen" "$C" "${seeds[@]}" 2>"$OUT/seedgen.log"
  touch "$C/.seeded"
fi
# fuzz_adapter: ONNX Runtime's LoRA adapter file (tests/data/lora)
if [[ -z "$(ls -A "$C/fuzz_adapter")" ]]; then cp tests/data/lora/*.onnx_adapter "$C/fuzz_adapter/"; fi
# fuzz_external: the models saved with external data, behind a byte sizing the side file (256
# bytes: shorter than the test models' 268-byte side file; 2 KiB: longer; in a pattern)
if [[ -z "$(ls -A "$C/fuzz_external")" ]]; then
  for f in tests/data/external/*.onnx; do
    for b in 8 11; do { printf "\\x$(printf %02x $b)"; cat "$f"; } >"$C/fuzz_external/seed-$b-$(basename "$f")"; done
  done
fi
# fuzz_model_scan: models with weights inside, behind bytes for the piece size and the size
# initializers are left out from (15-byte pieces and 1 KiB; the same with the ranges passed;
# 255-byte pieces and every initializer)
if [[ -z "$(ls -A "$C/fuzz_model_scan")" ]]; then
  for f in tests/data/half-mlp*.onnx $(find tests/golden/cases -name model.onnx -size -64k | head -8); do
    for b in 07ff 87ff 7f00; do { printf "\\x${b:0:2}\\x${b:2:2}"; cat "$f"; } >"$C/fuzz_model_scan/seed-$b-$(basename "$(dirname "$f")")-$(basename "$f")"; done
  done
fi
[[ $mode = build ]] && { echo "fuzz.sh: built into $OUT/bin"; exit 0; }

# ---- run -----------------------------------------------------------------------------------
((${#@})) && targets=("$@") || targets=("${TARGETS_ALL[@]}")
mkdir -p "$OUT/logs"
run_one() {
  local t=$1
  mkdir -p "$OUT/crashes/$t"
  echo "fuzz.sh: $t for ${secs}s"
  local rc=0
  "$OUT/bin/$t" "${FUZZ_FLAGS[@]}" -max_total_time="$secs" \
    -artifact_prefix="$OUT/crashes/$t/" "$C/$t" >"$OUT/logs/$t.log" 2>&1 || rc=$?
  # last status line: "#N ... cov: C ft: F corp: ..." (fork mode: "#N: cov: ... crash: a/b/c")
  local last
  last=$(grep -E '^#[0-9]+:?[[:space:]].*cov: ' "$OUT/logs/$t.log" | tail -n 1 || true)
  local found
  found=$(ls "$OUT/crashes/$t" 2>/dev/null | tr '\n' ' ' || true)
  if ((rc)) || [[ -n $found ]]; then
    echo "fuzz.sh: $t FAILED (exit $rc): $last; saved: $found-- see $OUT/logs/$t.log"
    rc=1
  else
    echo "fuzz.sh: $t ok: $last"
  fi
  return $rc
}
fail=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= PARALLEL)); then
    for p in "${pids[@]}"; do wait "$p" || fail=1; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
