#!/usr/bin/env bash
# The lesson doctests in their two portable modes, side by side: one process
# each, one per core (make test, make doctests-portable).
#
# - one thread with rounding noise on every float kernel
#   (tests/content/float_noise.py);
# - torch's and MKL's plain kernels.
#
# A figure quoted at its rounding level fails here instead of on a machine
# with another CPU. The two modes take about as long as each other, so two
# plain processes keep both cores busy to the end; run one after the other,
# each on two xdist workers, they took 23 s longer (126 s against 103 s), the
# cost of four interpreters loading torch and the models instead of two.
# Each mode's output is printed whole when both are done; the exit status is
# the first failure's. DOCTEST_MALLOC: glibc's malloc settings (the Makefile
# says why).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
# shellcheck disable=SC2206  # a list of NAME=value words
MALLOC=(${DOCTEST_MALLOC:-})
BASE_DB=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
BASE_DB=${BASE_DB%/*}
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT

run_mode() {  # run_mode NAME NAME=value...: one mode, its own database name
    local name=$1
    shift
    env "${MALLOC[@]}" "$@" DATABASE_URL="$BASE_DB/doctests_$name" \
        "$BIN/python" -m pytest -q -p no:xdist -p no:cacheprovider \
        tests/content/test_doctests.py > "$LOGS/$name.log" 2>&1
}

run_mode noise OMP_NUM_THREADS=1 DOCTEST_FLOAT_NOISE=1 &
noise=$!
run_mode plain ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE &
plain=$!
wait "$noise"
noise_rc=$?
wait "$plain"
plain_rc=$?
echo "-- one thread, float noise (exit $noise_rc)"
cat "$LOGS/noise.log"
echo "-- plain kernels (exit $plain_rc)"
cat "$LOGS/plain.log"
if [ "$noise_rc" -ne 0 ]; then exit "$noise_rc"; fi
exit "$plain_rc"
