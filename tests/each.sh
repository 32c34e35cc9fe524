# each.sh: sourced by the layers' scripts (tests/e2e/cuda.sh,
# tests/arm64/run.sh), from the repository root.
#
# each FUNC ITEM...: FUNC ITEM for every item, $JOBS at a time (default: the
# cores), their output printed in order; 1 when one failed
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
each() {
	local f=$1 n=0 rc=0 tmp k
	shift
	tmp=$(mktemp -d) || return 1
	for a in "$@"; do
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
		( "$f" "$a" > "$tmp/$n" 2>&1; echo $? > "$tmp/$n.rc" ) &
		n=$((n + 1))
	done
	wait
	for ((k = 0; k < n; k++)); do
		cat "$tmp/$k"
		[ "$(cat "$tmp/$k.rc" 2>/dev/null)" = 0 ] || rc=1
	done
	rm -rf "$tmp"
	return $rc
}
