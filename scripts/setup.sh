#!/usr/bin/env bash
# Prepare this machine for building and testing webtrain.
#
#  1. Installs the Debian packages the build needs (only the missing ones).
#  2. Fetches the protobuf-c 1.4.1 runtime (protobuf-c.c / protobuf-c.h) from
#     Debian's source package into build/third_party/protobuf-c/, using a
#     private apt configuration under build/third_party/apt/ (the system's apt
#     configuration is never modified).
#
# Idempotent: when everything is present it only checks and exits.
# Usage: bash scripts/setup.sh
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

# ---------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------
# chromium: the browser tests (IndexedDB, Web Worker, the demo page) run in Debian's headless
# Chromium. libvulkan1: the Vulkan loader the `webgpu` package's Dawn opens; without a GPU it
# finds chromium's SwiftShader (the webgpu backend's tests). (scripts/fuzz.sh, not part of the
# tests, also wants clang and libclang-rt-14-dev.)
PACKAGES=(emscripten binaryen wabt protobuf-c-compiler libprotobuf-c-dev
          cmake make gcc g++ python3 python3-onnx python3-numpy chromium libvulkan1)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  say "Debian packages present (${#PACKAGES[@]} checked)"
else
  say "installing missing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# ---------------------------------------------------------------------------
# 2. protobuf-c runtime from Debian's source package
# ---------------------------------------------------------------------------
PBC_VERSION=1.4.1
TP="$ROOT/build/third_party"
PBC_DIR="$TP/protobuf-c"
PBC_H="$PBC_DIR/include/protobuf-c/protobuf-c.h"
PBC_C="$PBC_DIR/src/protobuf-c.c"

# Print the Debian mirror URI the system uses for the "bookworm" suite.
# Reads deb822 *.sources files first, then one-line sources.list files.
system_debian_mirror() {
  local f uri=""
  shopt -s nullglob
  for f in /etc/apt/sources.list.d/*.sources; do
    uri=$(awk '
      function flush() {
        if (types ~ /(^| )deb(-src)?( |$)/ && suites ~ /(^| )bookworm( |$)/ &&
            enabled !~ /^[Nn][Oo]$/ && uris != "" && found == "") {
          split(uris, u, " "); found = u[1]
        }
        types = ""; suites = ""; uris = ""; enabled = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      {
        key = tolower($1); sub(/:$/, "", key)
        val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (key == "types") types = val
        else if (key == "suites") suites = val
        else if (key == "uris") uris = val
        else if (key == "enabled") enabled = val
      }
      END { flush(); if (found != "") print found }
    ' "$f")
    if [ -n "$uri" ]; then printf '%s\n' "$uri"; shopt -u nullglob; return 0; fi
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    uri=$(awk '
      /^[ \t]*#/ { next }
      $1 == "deb" || $1 == "deb-src" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == "bookworm") { print $i; exit }
      }
    ' "$f")
    if [ -n "$uri" ]; then printf '%s\n' "$uri"; shopt -u nullglob; return 0; fi
  done
  shopt -u nullglob
  return 1
}

if [ -f "$PBC_H" ] && [ -f "$PBC_C" ]; then
  say "protobuf-c $PBC_VERSION runtime present in build/third_party/protobuf-c"
else
  say "fetching protobuf-c $PBC_VERSION runtime from Debian's source package"
  MIRROR=${WEBTRAIN_DEBIAN_MIRROR:-}
  if [ -z "$MIRROR" ]; then
    MIRROR=$(system_debian_mirror) ||
      die "could not find the system's Debian mirror for bookworm in /etc/apt (set WEBTRAIN_DEBIAN_MIRROR)"
  fi
  KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -r "$KEYRING" ] || die "missing $KEYRING (package debian-archive-keyring)"
  say "using mirror $MIRROR (deb-src bookworm main)"

  APTDIR="$TP/apt"
  mkdir -p "$APTDIR/sources" "$APTDIR/lists/partial" \
           "$APTDIR/cache/archives/partial" "$APTDIR/work"
  cat > "$APTDIR/sources/debian-src.sources" <<EOF
Types: deb-src
URIs: $MIRROR
Suites: bookworm
Components: main
Signed-By: $KEYRING
EOF
  APT_OPTS=(-o Dir::Etc::SourceList=/dev/null
            -o "Dir::Etc::SourceParts=$APTDIR/sources"
            -o "Dir::State::Lists=$APTDIR/lists"
            -o "Dir::Cache=$APTDIR/cache")

  # Running as root, apt downloads as the unprivileged _apt user: let it write
  # into the work dir (otherwise apt falls back to an unsandboxed download).
  if [ "$(id -u)" -eq 0 ] && getent passwd _apt >/dev/null; then
    chown _apt "$APTDIR/work"
  fi

  say "apt-get update (private config in build/third_party/apt)"
  apt-get -q "${APT_OPTS[@]}" update
  # apt moves InRelease out of partial/ only after its signature verified.
  shopt -s nullglob
  inrelease=("$APTDIR"/lists/*_dists_bookworm_InRelease "$APTDIR"/lists/*_dists_bookworm_Release.gpg)
  shopt -u nullglob
  [ "${#inrelease[@]}" -gt 0 ] || die "no verified bookworm Release file in $APTDIR/lists"

  say "apt-get source --download-only protobuf-c"
  ORIG="protobuf-c_${PBC_VERSION}.orig.tar.gz"
  rm -f "$APTDIR/work/$ORIG"
  (cd "$APTDIR/work" && apt-get -q "${APT_OPTS[@]}" source --download-only "protobuf-c=${PBC_VERSION}-1")
  [ -f "$APTDIR/work/$ORIG" ] || die "apt did not download $ORIG"

  # apt already verified the download against the signed Sources index;
  # check again explicitly so a silent mismatch cannot slip through.
  expected=$( (apt-cache "${APT_OPTS[@]}" showsrc protobuf-c || true) |
             awk -v f="$ORIG" '
               /^Checksums-Sha256:/ { s = 1; next }
               /^[^ ]/ { s = 0 }
               s && $3 == f { print $1; exit }')
  actual=$(sha256sum "$APTDIR/work/$ORIG" | cut -d' ' -f1)
  [ -n "$expected" ] || die "no SHA-256 for $ORIG in the signed Sources index"
  [ "$expected" = "$actual" ] || die "SHA-256 mismatch for $ORIG: index $expected, file $actual"
  say "verified $ORIG sha256 $actual against the signed index"

  # Extract only what the wasm build needs (Debian applies no patches to it).
  stage="$TP/protobuf-c.tmp"
  rm -rf "$stage"
  mkdir -p "$stage/x" "$stage/out/include/protobuf-c" "$stage/out/src"
  top="protobuf-c-${PBC_VERSION}"
  tar -xzf "$APTDIR/work/$ORIG" -C "$stage/x" \
      "$top/protobuf-c/protobuf-c.c" "$top/protobuf-c/protobuf-c.h" "$top/LICENSE"
  cp "$stage/x/$top/protobuf-c/protobuf-c.h" "$stage/out/include/protobuf-c/"
  cp "$stage/x/$top/protobuf-c/protobuf-c.c" "$stage/out/src/"
  cp "$stage/x/$top/LICENSE" "$stage/out/LICENSE"
  rm -rf "$PBC_DIR"
  mv "$stage/out" "$PBC_DIR"
  rm -rf "$stage"

  if [ -f /usr/include/protobuf-c/protobuf-c.h ] &&
     ! cmp -s "$PBC_H" /usr/include/protobuf-c/protobuf-c.h; then
    say "warning: protobuf-c.h differs from /usr/include/protobuf-c/protobuf-c.h (protoc-c version mismatch?)"
  fi
  say "installed protobuf-c runtime into build/third_party/protobuf-c"
fi

# --- npm dev dependencies (tests and benchmarks: onnxruntime-node, onnxruntime-web, typescript)
# --ignore-scripts: onnxruntime-node's install script downloads GPU binaries from a host outside
# the npm registry; its CPU binaries are already in the package.
# A node_modules that is a link (a git worktree sharing another checkout's) is left alone: npm ci
# would empty the folder it points to and install a copy here instead.
if [ -f package-lock.json ]; then
  if [ -L node_modules ]; then
    say "node_modules is a link to $(readlink node_modules): not reinstalled through it (run npm ci there if package-lock.json changed)"
  elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "npm ci (dev dependencies)"
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  else
    say "npm dev dependencies present"
  fi
fi

say ok
