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
declare -a NAMES=() SECS=() KINDS=() NOTES=()

report() {
    local total=0 tests=0 i
    printf '\n%-46s %8s\n' "stage" "seconds"
    for i in "${!NAMES[@]}"; do
        printf '%-46s %8.1f\n' "${NAMES[$i]}" "${SECS[$i]}"
        total=$(awk -v a="$total" -v b="${SECS[$i]}" 'BEGIN {print a + b}')
        if [ "${KINDS[$i]}" = test ]; then
            tests=$(awk -v a="$tests" -v b="${SECS[$i]}" 'BEGIN {print a + b}')
        fi
    done
    printf '%-46s %8.1f  (%s min; budget 15 min)\n' "test stages" "$tests" \
        "$(awk -v s="$tests" 'BEGIN {printf "%.1f", s / 60}')"
    printf '%-46s %8.1f\n' "all stages" "$total"
    for i in "${!NOTES[@]}"; do echo "  ${NOTES[$i]}"; done
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
# The lesson doctests run in their two portable modes only, which are
# stricter than this machine's own kernels (a third run would add minutes).
# They run beside pytest, at idle priority: pytest leaves about an eighth of
# the two cores idle (its tests wait on time limits, restarts and browsers),
# and the doctests, CPU work alone, fill it and finish after it. Each mode
# runs in a session of its own whose autogroup has nice 19 (with autogroup
# on, nice alone weighs a process only against its own session), so
# pytest's processes keep the cores they want.
DOCTESTS=("$BIN/python" -m pytest -q -n 0 -p no:cacheprovider tests/content/test_doctests.py)
LOGS=$(mktemp -d)
declare -a DOC_NAMES=("doctests: one thread, float noise" "doctests: plain kernels")
declare -a DOC_ENVS=("OMP_NUM_THREADS=1 DOCTEST_FLOAT_NOISE=1" \
    "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE")
declare -a DOC_PIDS=()

doctests_start() {
    local i
    for i in "${!DOC_NAMES[@]}"; do
        # shellcheck disable=SC2016  # expanded by the inner shell
        setsid bash -c 'echo 19 > /proc/self/autogroup 2>/dev/null
            start=$(date +%s.%N); env $1 nice -n 19 "${@:2}"; rc=$?
            echo "$rc $start $(date +%s.%N)" > "$0.done"; exit $rc' \
            "$LOGS/$i" "${DOC_ENVS[$i]}" "${DOCTESTS[@]}" > "$LOGS/$i.log" 2>&1 &
        DOC_PIDS+=($!)
    done
    trap doctests_stop EXIT  # an interrupted make test leaves none behind
}

doctests_stop() {  # pytest failed: the doctests' result no longer matters
    local pid
    for pid in "${DOC_PIDS[@]}"; do kill -- "-$pid" 2>/dev/null; done
}

doctests_wait() {  # their logs, their times, their status
    local i rc=0 status start end
    for i in "${!DOC_NAMES[@]}"; do
        wait "${DOC_PIDS[$i]}" || rc=1
        echo "== ${DOC_NAMES[$i]} (ran beside pytest)"
        cat "$LOGS/$i.log"
        read -r status start end < "$LOGS/$i.done" || status=1
        [ "${status:-1}" -eq 0 ] || rc=1
        NOTES+=("$(printf '%s: %.1f s, ending %.1f s after pytest' \
            "${DOC_NAMES[$i]}" "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" \
            "$(awk -v a="$PYTEST_END" -v b="$end" 'BEGIN {print b - a}')")")
    done
    return "$rc"
}

pytest_and_doctests() {
    local rc start
    doctests_start
    start=$(date +%s.%N)
    # shellcheck disable=SC2086  # PYTEST_ARGS is a list of words
    "$BIN/python" -m pytest -n 2 --dist loadgroup --durations=20 \
        --ignore=tests/content/test_doctests.py ${PYTEST_ARGS:-}
    rc=$?
    PYTEST_END=$(date +%s.%N)
    NOTES+=("$(printf 'pytest: %.1f s' \
        "$(awk -v a="$start" -v b="$PYTEST_END" 'BEGIN {print b - a}')")")
    if [ "$rc" -ne 0 ]; then
        doctests_stop
        return "$rc"
    fi
    doctests_wait
}

stage test "pytest, and the portable doctests beside it" pytest_and_doctests
for bench in sandbox pipeline page surge; do
    stage test "benchmark: $bench (short)" "$BIN/python" "benchmarks/${bench}_bench.py" --short
done
report
