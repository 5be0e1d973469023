#!/usr/bin/env bash
# `make test`, stage by stage: set up, lint, the suite, the portable doctests
# and the benchmarks' short mode. Each stage is timed and the times are
# printed at the end, also when a stage fails (the run stops there, with its
# exit status). The test stages are held to 15 minutes on a 2-core machine
# (docs/testing.md); setting up is timed apart, since a warm checkout skips it.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
MAKE_CMD=${MAKE:-make}
declare -a NAMES=() SECS=() KINDS=()

report() {
    local total=0 tests=0 i
    printf '\n%-34s %8s\n' "stage" "seconds"
    for i in "${!NAMES[@]}"; do
        printf '%-34s %8.1f\n' "${NAMES[$i]}" "${SECS[$i]}"
        total=$(awk -v a="$total" -v b="${SECS[$i]}" 'BEGIN {print a + b}')
        if [ "${KINDS[$i]}" = test ]; then
            tests=$(awk -v a="$tests" -v b="${SECS[$i]}" 'BEGIN {print a + b}')
        fi
    done
    printf '%-34s %8.1f  (%s min; budget 15 min)\n' "test stages" "$tests" \
        "$(awk -v s="$tests" 'BEGIN {printf "%.1f", s / 60}')"
    printf '%-34s %8.1f\n' "all stages" "$total"
}

stage() {  # stage KIND NAME COMMAND...
    local kind=$1 name=$2 start end rc
    shift 2
    echo "== $name"
    start=$(date +%s.%N)
    "$@"
    rc=$?
    end=$(date +%s.%N)
    NAMES+=("$name")
    SECS+=("$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')")
    KINDS+=("$kind")
    if [ "$rc" -ne 0 ]; then
        report
        echo "make test: stage '$name' failed (exit $rc)" >&2
        exit "$rc"
    fi
}

stage setup "set up (venv, assets, services)" \
    "$MAKE_CMD" --no-print-directory venv assets system-deps services
stage test "ruff" "$BIN/ruff" check .
stage test "lint-imports" "$BIN/lint-imports" --no-cache
# shellcheck disable=SC2086  # PYTEST_ARGS is a list of words
stage test "pytest" "$BIN/python" -m pytest -n 2 --dist loadgroup --durations=20 \
    --ignore=tests/content/test_doctests.py ${PYTEST_ARGS:-}
# The lesson doctests run in their two portable modes only, which are
# stricter than this machine's own kernels (a third run would add minutes);
# side by side, one process each (the script says why).
stage test "doctests: both portable modes" bash scripts/doctests_portable.sh
for bench in sandbox pipeline page surge stream; do
    stage test "benchmark: $bench (short)" "$BIN/python" "benchmarks/${bench}_bench.py" --short
done
# The deadline drill, 100 learners: fails when anything is lost or duplicated.
stage test "deadline drill (short)" "$BIN/python" benchmarks/deadline_drill.py --short
report
