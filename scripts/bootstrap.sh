#!/usr/bin/env bash
# silt bootstrap: install what the build and tests need, idempotently.
#
#   * Debian packages (apt-get when root; otherwise print the sudo line, exit 1)
#   * DuckDB 1.4.4 C API (libduckdb.so + duckdb.h) from the npm registry into
#     third_party/duckdb/{lib,include}, verified against pinned SHA-256 sums.
#     DUCKDB_ROOT=/path skips the download and only checks that directory.
#
# Silent when everything is already present; prints short progress lines
# only when it does something.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------
PACKAGES=(
  build-essential cmake pkg-config
  clang libclang-rt-14-dev
  libyaml-dev libjansson-dev libssl-dev libcurl4-openssl-dev libcmocka-dev
  libarchive-dev zlib1g-dev libpcre2-dev libmicrohttpd-dev libshp-dev
  flatbuffers-compiler python3-flatbuffers
  python3-croniter strace
  nginx-light
  npm nodejs
  wrk libedit-dev
  libavro-dev avro-bin python3-avro
  podman runc busybox-static umoci
  mosquitto mosquitto-clients libmosquitto-dev
  ceph-mon ceph-osd radosgw ceph-common
  chromium hyperfine
)

# One dpkg-query call for all packages (fast); it exits non-zero when some
# package is unknown to dpkg, which just means "missing".
declare -A STATUS=()
while read -r pkg status; do
  [[ -n "$pkg" ]] && STATUS["$pkg"]="$status"
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)

MISSING=()
for pkg in "${PACKAGES[@]}"; do
  [[ "${STATUS[$pkg]:-}" == "install ok installed" ]] && continue
  case "$pkg" in
    # NodeSource's nodejs package ships npm itself and Conflicts: npm; asking
    # apt for Debian's npm there would replace nodejs. Accept the commands.
    npm)    command -v npm  >/dev/null 2>&1 && continue ;;
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
  esac
  MISSING+=("$pkg")
done

if ((${#MISSING[@]})); then
  if [[ "$(id -u)" -ne 0 ]]; then
    printf 'bootstrap: missing Debian packages; run:\n' >&2
    printf '  sudo apt-get install -y --no-install-recommends %s\n' "${MISSING[*]}" >&2
    exit 1
  fi
  say "installing Debian packages: ${MISSING[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${MISSING[@]}" </dev/null
fi

# ---------------------------------------------------------------------------
# 2. DuckDB 1.4.4 (C API)
# ---------------------------------------------------------------------------
DUCKDB_LIB_PKG='@duckdb/node-bindings-linux-x64@1.4.4-r.4'
DUCKDB_LIB_MEMBER='package/libduckdb.so'
DUCKDB_LIB_SHA256='1ef33048e12235115ac0d277a0aaccbb560e33248144f488b5ac005cd9ba81b5'
DUCKDB_HDR_PKG='duckdb@1.4.4'
DUCKDB_HDR_MEMBER='package/src/duckdb/src/include/duckdb.h'
DUCKDB_HDR_SHA256='cbe6a827284375c5a646b8f27dbd3a00808ce8738b5bbb49c190cb1e08540281'

install_duckdb() {
if [[ -n "${DUCKDB_ROOT:-}" ]]; then
  hdr=''; lib=''
  for d in "$DUCKDB_ROOT" "$DUCKDB_ROOT/include"; do
    [[ -f "$d/duckdb.h" ]] && { hdr="$d/duckdb.h"; break; }
  done
  for d in "$DUCKDB_ROOT" "$DUCKDB_ROOT/lib"; do
    [[ -f "$d/libduckdb.so" ]] && { lib="$d/libduckdb.so"; break; }
  done
  [[ -n "$hdr" ]] || die "DUCKDB_ROOT=$DUCKDB_ROOT: no duckdb.h (looked in . and include/)"
  [[ -n "$lib" ]] || die "DUCKDB_ROOT=$DUCKDB_ROOT: no libduckdb.so (looked in . and lib/)"
  return 0
fi

DEST="$ROOT/third_party/duckdb"
DEST_HDR="$DEST/include/duckdb.h"
DEST_LIB="$DEST/lib/libduckdb.so"

STAMP="$DEST/.verified"

# Hashing the 62 MB library takes ~0.3 s, so a verified state is remembered in
# $STAMP as "sha256 size mtime inode" per file; any change to a file (size,
# mtime or inode) forces a full re-hash. SILT_BOOTSTRAP_REHASH=1 always hashes.
fileid() { stat -c '%s %.9Y %i' "$1" 2>/dev/null; }

sha_ok() { # file expected-sha256
  [[ -f "$1" ]] || return 1
  local id got
  id="$(fileid "$1")"
  if [[ "${SILT_BOOTSTRAP_REHASH:-0}" != 1 && -f "$STAMP" ]] \
     && grep -qxF "$2 $id" "$STAMP"; then
    return 0
  fi
  got="$(sha256sum "$1")" || return 1
  [[ "${got%% *}" == "$2" ]] || return 1
  return 0
}

write_stamp() {
  {
    printf '%s %s\n' "$DUCKDB_HDR_SHA256" "$(fileid "$DEST_HDR")"
    printf '%s %s\n' "$DUCKDB_LIB_SHA256" "$(fileid "$DEST_LIB")"
  } > "$STAMP.tmp.$$" && mv -f "$STAMP.tmp.$$" "$STAMP"
}

need_hdr=1; need_lib=1
sha_ok "$DEST_HDR" "$DUCKDB_HDR_SHA256" && need_hdr=0
sha_ok "$DEST_LIB" "$DUCKDB_LIB_SHA256" && need_lib=0
if ! ((need_hdr || need_lib)); then
  # Both verified: (re)write the stamp only if it is stale, quietly.
  want="$DUCKDB_HDR_SHA256 $(fileid "$DEST_HDR")
$DUCKDB_LIB_SHA256 $(fileid "$DEST_LIB")"
  [[ -f "$STAMP" && "$(<"$STAMP")" == "$want" ]] || write_stamp
  return 0
fi
rm -f "$STAMP"

[[ "$(uname -s)/$(uname -m)" == "Linux/x86_64" ]] \
  || die "prebuilt DuckDB is only pinned for Linux/x86_64; set DUCKDB_ROOT to a DuckDB 1.4.4 install"
command -v npm >/dev/null 2>&1 || die "npm not found (needed to fetch DuckDB)"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/silt-bootstrap.XXXXXX")"

# fetch <npm-spec> <tar-member> <expected-sha256> <destination>
fetch() {
  local spec="$1" member="$2" sha="$3" dest="$4" tgz got
  say "fetching $spec ($(basename "$dest"))"
  mkdir -p "$TMP/pack" "$TMP/x"
  rm -f "$TMP"/pack/*.tgz
  (cd "$TMP" && npm_config_update_notifier=false npm pack "$spec" \
      --pack-destination "$TMP/pack" --loglevel=error </dev/null >/dev/null) \
    || die "npm pack $spec failed"
  tgz=("$TMP"/pack/*.tgz)
  [[ -f "${tgz[0]}" ]] || die "npm pack $spec produced no tarball"
  tar -xzf "${tgz[0]}" -C "$TMP/x" "$member" || die "$spec: $member not in tarball"
  got="$(sha256sum "$TMP/x/$member")"; got="${got%% *}"
  if [[ "$got" != "$sha" ]]; then
    die "checksum mismatch for $member from $spec:
  expected $sha
  got      $got
refusing to install it (update the pin in scripts/bootstrap.sh only after checking why)"
  fi
  mkdir -p "$(dirname "$dest")"
  # Copy next to the destination, then rename: never leave a half-written file.
  cp "$TMP/x/$member" "$dest.tmp.$$"
  mv -f "$dest.tmp.$$" "$dest"
  rm -f "${tgz[0]}"
}

((need_hdr)) && fetch "$DUCKDB_HDR_PKG" "$DUCKDB_HDR_MEMBER" "$DUCKDB_HDR_SHA256" "$DEST_HDR"
((need_lib)) && fetch "$DUCKDB_LIB_PKG" "$DUCKDB_LIB_MEMBER" "$DUCKDB_LIB_SHA256" "$DEST_LIB"
chmod 0755 "$DEST_LIB"
write_stamp
say "DuckDB 1.4.4 installed in ${DEST#"$ROOT"/}"
rm -rf "$TMP"
}

# ---------------------------------------------------------------------------
# 3. npm packages the tests use (the official Foundry client, apache-arrow,
#    anvil, solc, playwright-core) and uPlot, which the web UI embeds
# ---------------------------------------------------------------------------
# Installed from tests/node/package.json + package-lock.json (exact pins) into
# $SILT_NPM_CACHE (default ~/.cache/silt/npm), outside the tree; re-installed
# only when the lock file changes. Tests find them through
# tests/integration/lib.sh (node_run).
install_npm_test_deps() {
  local cache="${SILT_NPM_CACHE:-$HOME/.cache/silt/npm}" want have=''
  want="$(sha256sum "$ROOT/tests/node/package-lock.json")"; want="${want%% *}"
  [[ -f "$cache/.lock-sha256" ]] && have="$(<"$cache/.lock-sha256")"
  [[ "$have" == "$want" && -d "$cache/node_modules" ]] && return 0
  command -v npm >/dev/null 2>&1 || die "npm not found (needed for the test packages)"
  say "installing npm test packages into $cache"
  mkdir -p "$cache"
  cp "$ROOT/tests/node/package.json" "$ROOT/tests/node/package-lock.json" "$cache/"
  (cd "$cache" && npm_config_update_notifier=false npm ci --no-audit --no-fund \
      --loglevel=error </dev/null >/dev/null) || die "npm ci in $cache failed"
  printf '%s\n' "$want" > "$cache/.lock-sha256"
}

install_duckdb
install_npm_test_deps
