#!/bin/bash
# run.sh: the libFuzzer harnesses (tests/fuzz/README.md).
#
#   tests/fuzz/run.sh smoke RUNS BIN...      replay, then RUNS inputs each
#   tests/fuzz/run.sh fuzz SECONDS BIN...    fuzz SECONDS each
#
# For build/fuzz/fuzz_NAME: seeds in tests/fuzz/corpus/NAME (committed, never
# written), reproducers of fixed findings in tests/fuzz/regress/NAME
# (committed), the growing corpus in build/fuzz/work/NAME (smoke: a fresh
# build/fuzz/smoke/NAME), findings in
# build/fuzz/findings/NAME. smoke first runs every seed and reproducer once
# (the replay), then fuzzes for RUNS inputs from a fixed seed: a short,
# nearly repeatable run (coverage steers the mutations, so the inputs can
# drift a little between builds), and every finding is saved to rerun.
# Each input may take 30 s and 2 GB; the target's
# stderr (the compiler's error messages) is closed. Exit 1 on a finding.
set -u
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
cd "$(dirname "$0")/../.." || exit 2
mode=$1 n=$2
shift 2
fail=0
for bin in "$@"; do
	name=${bin##*/fuzz_}
	seeds=tests/fuzz/corpus/$name regress=tests/fuzz/regress/$name
	work=build/fuzz/work/$name finds=build/fuzz/findings/$name
	mkdir -p "$work" "$finds" || exit 2
	[ -d "$seeds" ] || { echo "fuzz: $seeds: no seed corpus for $bin"; exit 2; }
	opts=(-rss_limit_mb=2048 -timeout=30 -close_fd_mask=2 -artifact_prefix="$finds/")
	dirs=("$seeds")
	[ -d "$regress" ] && dirs+=("$regress")
	log=build/fuzz/$name.$mode.log
	if [ "$mode" = smoke ]; then
		ni=$(find "${dirs[@]}" -type f | wc -l)
		if ! "$bin" "${opts[@]}" -runs=0 "${dirs[@]}" > "$log.replay" 2>&1; then
			echo "fuzz $name: replay of $ni inputs FAILED (see $log.replay)"
			tail -n 30 "$log.replay"
			fail=1
			continue
		fi
		echo "fuzz $name: replay of $ni inputs ok"
	fi
	# fuzz mode goes on after a finding (-fork=1: each finding is saved in
	# $finds and counted); smoke stops at the first
	keep=()
	[ "$mode" = fuzz ] && keep=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
	if [ "$mode" = fuzz ]; then
		keep+=(-max_total_time="$n")
	else
		work=build/fuzz/smoke/$name
		rm -rf "$work" && mkdir -p "$work"
		keep+=(-seed=1 -runs="$n")
	fi
	start=$(date +%s)
	"$bin" "${opts[@]}" "${keep[@]}" -print_final_stats=1 "$work" "${dirs[@]}" > "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	[ -n "$execs" ] || execs=$(printf '%s\n' "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
	cov=$(printf '%s\n' "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+')
	corp=$(find "$work" -type f | wc -l)
	# crash-, leak-, oom-, timeout- files are findings; slow-unit- ones
	# (over 10 s, under the 30 s limit) are only listed
	nf=$(find "$finds" -type f ! -name 'slow-unit-*' | wc -l)
	ns=$(find "$finds" -type f -name 'slow-unit-*' | wc -l)
	if [ "$mode" = fuzz ]; then
		echo "fuzz $name: $secs s, ${execs:-?} runs, ${cov:-cov ?}, corpus $corp, $nf finding(s) and $ns slow input(s) in $finds"
		[ "$nf" -eq 0 ] || fail=1
	elif [ "$rc" -ne 0 ]; then
		echo "fuzz $name: FINDING after ${execs:-?} runs (see $log, inputs in $finds):"
		grep -m 3 -E 'ERROR|runtime error|SUMMARY|deadly signal|out-of-memory|timeout' "$log"
		fail=1
	else
		echo "fuzz $name: $secs s, ${execs:-?} runs, ${cov:-cov ?}, corpus $corp, no finding"
	fi
done
exit $fail
