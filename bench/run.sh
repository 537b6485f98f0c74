#!/usr/bin/env bash
# make bench — runs every benchmark and prints Markdown tables for
# docs/performance.md. Figures only; nothing here asserts a time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SILT_BUILD_DIR:-$root/build}
echo "## Metadata chain ($(date -u +%Y-%m-%d), $(nproc) cores)"
"$build/bench/bench_chain" "$build/silt" "${SILT_BENCH_BLOCKS:-10000}" "${SILT_BENCH_RUNS:-30}"
echo
echo "## Data plane ($(date -u +%Y-%m-%d), $(nproc) cores)"
"$build/bench/bench_ingest" "$build/silt" "${SILT_BENCH_ROWS:-10000000}" "${SILT_BENCH_SNAPSHOT_ROUNDS:-10}"
echo
bash "$root/bench/bench_serve.sh" "$build/silt" "$build/bench/bare_http" "${SILT_BENCH_ROWS:-10000000}" "${SILT_BENCH_SERVE_SECONDS:-5}"
echo
bash "$root/bench/bench_avro.sh" "$build/silt" "$build/bench/avro_gen" "${SILT_BENCH_ROWS:-10000000}" "${SILT_BENCH_AVRO_RUNS:-3}"
echo
bash "$root/bench/bench_output.sh" "$build/silt" "${SILT_BENCH_OUTPUT_ROWS:-1000000}" "${SILT_BENCH_OUTPUT_RUNS:-3}"
echo
bash "$root/bench/bench_small.sh" "$build/silt" "${SILT_BENCH_SMALL_RUNS:-30}"
echo
bash "$root/bench/bench_push.sh" "$build/silt" "${SILT_BENCH_PUSH_SECONDS:-5}" "${SILT_BENCH_PUSH_BATCH:-5000}"
echo
bash "$root/bench/bench_transfer.sh" "$build/silt" "${SILT_BENCH_TRANSFER_BLOCKS:-1000}" "${SILT_BENCH_TRANSFER_SLICES:-9}" "${SILT_BENCH_TRANSFER_SLICE_MB:-25}"
echo
bash "$root/bench/bench_derive.sh" "$build/silt" "${SILT_BENCH_DERIVE_ROWS:-1000000}" "${SILT_BENCH_DERIVE_RUNS:-3}"
