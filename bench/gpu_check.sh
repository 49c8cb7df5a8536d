#!/usr/bin/env bash
# On the device machine: the gpu-marked tests, then the GPU benchmarks; logs and tables under $OUT.
#
#   bash bench/gpu_check.sh            (carry .whl for pydantic & co, .benchdata for real graphs,
#                                       .peers for bench_peers: a copy of ../shared/peers)
#
# $OUT/gpu_tests.log     pytest -m gpu output
# $OUT/<table>.md/.log   one markdown table and log per benchmark (BENCHES below)
# $OUT/backbone.md       every table, with the device name; printed last
# Exits non-zero if the tests or any benchmark failed, after running everything.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/.out}
mkdir -p "$OUT"
source bench/device_env.sh

# "script output-name [args...]"; append a line per new benchmark.
BENCHES=(
    "bench/bench_traversal.py backbone_traversal.md"
    "bench/bench_service.py backbone_service.md --jobs 200 --upload-mb 64"
    "bench/bench_pruning.py traversal_pruning.md"
    "bench/bench_mis.py mis.md"
    "bench/bench_centrality.py daccer_bench.md"
    "bench/bench_apsp.py apsp.md"
    "bench/bench_counting.py counting.md"
    "bench/bench_cnd.py cnd.md"
    "bench/bench_cnd_memetic.py cnd_memetic.md --plan 1,5:cnp --cpu-processes 8 --gpu-processes 2"
    "bench/bench_peers.py peers.md"
    "bench/bench_e2e.py e2e.md"
    "bench/bench_handoff.py handoff.md --scales 20,22 --repeat 5"
)

status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    | tee "$OUT/device.txt" || true

# Collection errors in modules whose service dependencies the image lacks must not stop the run
# (pyproject addopts already passes -q).
python3 -m pytest -m gpu -rfEs -p no:cacheprovider --continue-on-collection-errors tests/ 2>&1 \
    | tee "$OUT/gpu_tests.log" || status=1

for entry in "${BENCHES[@]}"; do
    read -r script name args <<<"$entry"
    # shellcheck disable=SC2086  # args is a word list on purpose
    python3 "$script" --out "$OUT/$name" ${args:-} 2>&1 | tee "$OUT/${name%.md}.log" || status=1
done

{
    echo "# GPU benchmarks"
    echo
    echo "Device: $(cat "$OUT/device.txt" 2>/dev/null || echo unknown)"
    for entry in "${BENCHES[@]}"; do
        read -r _ name _ <<<"$entry"
        echo
        cat "$OUT/$name" 2>/dev/null || echo "($name: benchmark failed, see ${name%.md}.log)"
    done
} >"$OUT/backbone.md"

echo
echo "== tests: $(tail -n 1 "$OUT/gpu_tests.log")"
cat "$OUT/backbone.md"
exit "$status"
