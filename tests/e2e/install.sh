#!/bin/bash
# install.sh: `make install`, the CMake package and the Make include, used
# as a user would, then `make uninstall`.
#
#   tests/e2e/install.sh            (make install-check, part of make test)
#
# Everything happens in a temporary folder (removed at the end; no root):
#  1. make install PREFIX=$tmp/prefix; the installed onnxcc --version (with
#     this checkout's commit; none from a `git archive` of it), --help, and
#     the installed man page renders with man -l and groff -ww, silently.
#  2. examples/cmake (copied with examples/digits/digits.onnx and font.h,
#     under a folder name with a space) configured with Debian's cmake
#     against the prefix, built, run: its output must equal that of the same
#     main.c built by hand from ./onnxcc's output, and say 10/10.
#     With Ninja too, where there is one.
#  3. A build with nothing changed runs no onnxcc; touching the model, then
#     the installed onnxcc, makes the build compile the model again (the
#     generated digits.c is newer, the build log names the command).
#  4. The prefix moved elsewhere (a name with a space) still works: a fresh
#     configure and build against it.
#  5. A tiny makefile that includes share/onnxcc/onnxcc.mk builds the same
#     program with the pattern rule and with $(call onnxcc_model,...), and
#     remakes after the model is touched.
#  6. make uninstall PREFIX=$tmp/prefix leaves nothing: the prefix is gone.
set -u
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
command -v cmake >/dev/null || { echo "install: cmake is missing (apt-get install cmake)"; exit 2; }
tmp=$(mktemp -d) || exit 2
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# newer FILE MARKER: FILE was written after MARKER
newer() { [ -n "$(find "$1" -newer "$2")" ]; }

# 1. install, version, man page
prefix=$tmp/prefix
if make --no-print-directory install PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
	ok "make install PREFIX=$prefix"
else
	bad "make install"; cat "$tmp/install.log"; exit 1
fi
for f in bin/onnxcc share/man/man1/onnxcc.1 lib/cmake/onnxcc/onnxccConfig.cmake \
	lib/cmake/onnxcc/onnxccConfigVersion.cmake share/onnxcc/onnxcc.mk; do
	[ -f "$prefix/$f" ] || bad "not installed: $f"
done
v=$(cd "$tmp" && "$prefix/bin/onnxcc" --version)
want="onnxcc $(cat VERSION)"
if [ -e .git ] && command -v git >/dev/null; then
	want="$want (git $(git describe --always --dirty --exclude='*'))"
fi
[ "$v" = "$want" ] && ok "installed --version: $v" || bad "--version: '$v', expected '$want'"
# from a `git archive` tarball: the version without a commit (only
# build/gen/version.h is made there, nothing compiled)
if [ -e .git ] && command -v git >/dev/null; then
	mkdir -p "$tmp/tarball"
	git archive HEAD | tar -x -C "$tmp/tarball"
	make --no-print-directory -C "$tmp/tarball" build/gen/version.h >/dev/null 2>&1
	grep -q '^#define OX_COMMIT ""$' "$tmp/tarball/build/gen/version.h" 2>/dev/null &&
		ok "from a git archive tarball: no commit in build/gen/version.h" ||
		bad "from a git archive tarball: build/gen/version.h is $(cat "$tmp/tarball/build/gen/version.h" 2>&1)"
fi
h=$("$prefix/bin/onnxcc" --help) && [ "${h%%:*}" = usage ] && ok "--help: the usage on stdout, exit 0" ||
	bad "--help: exit $? or no usage on stdout"
page=$prefix/share/man/man1/onnxcc.1
MANWIDTH=80 man -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err"
if [ -s "$tmp/man.err" ] || ! grep -q "EXIT STATUS" "$tmp/man.txt" || ! grep -q -- "--weights" "$tmp/man.txt"; then
	bad "man -l $page"; cat "$tmp/man.err"
else
	ok "man -l renders the page ($(wc -l <"$tmp/man.txt") lines)"
fi
warn=$(groff -man -Tutf8 -ww "$page" 2>&1 >/dev/null)
[ -z "$warn" ] && ok "groff -man -ww: no warnings" || bad "groff -man -ww: $warn"

# the program built by hand from ./onnxcc's output: the expected output
mkdir -p "$tmp/direct"
./onnxcc examples/digits/digits.onnx -o "$tmp/direct/digits.c" --cpu generic &&
	${CC:-cc} -std=c11 -O2 -I"$tmp/direct" -Iexamples/digits -o "$tmp/direct/app" examples/cmake/main.c \
		"$tmp/direct/digits.c" "$tmp/direct/digits_weights.c" -lm || { bad "the direct build"; exit 1; }
"$tmp/direct/app" >"$tmp/direct.out"
grep -q "^recognized 10/10$" "$tmp/direct.out" || bad "the direct build: $(tail -n 1 "$tmp/direct.out")"

# 2. examples/cmake against the installed package
src="$tmp/src dir"
mkdir -p "$src/examples/cmake" "$src/examples/digits"
cp examples/cmake/CMakeLists.txt examples/cmake/main.c "$src/examples/cmake/"
cp examples/digits/digits.onnx examples/digits/font.h "$src/examples/digits/"
bld="$tmp/cmake build"
# check_app DIR LABEL: DIR/digits_app prints what the direct build printed
check_app() {
	if "$1/digits_app" >"$tmp/app.out" && cmp -s "$tmp/app.out" "$tmp/direct.out"; then
		ok "$2: digits_app prints $(tail -n 1 "$tmp/app.out"), as the direct build"
	else
		bad "$2: digits_app's output differs from the direct build's:"; diff "$tmp/direct.out" "$tmp/app.out"
	fi
}
if cmake -S "$src/examples/cmake" -B "$bld" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cfg.log" 2>&1 &&
	cmake --build "$bld" >"$tmp/b1.log" 2>&1; then
	ok "cmake configure and build of examples/cmake ($(cmake --version | head -n 1))"
	check_app "$bld" "cmake"
else
	bad "cmake configure or build"; cat "$tmp/cfg.log" "$tmp/b1.log" 2>/dev/null; exit 1
fi
gen=$bld/onnxcc/digits/digits.c
[ -f "$gen" ] && [ -f "$bld/onnxcc/digits/digits.h" ] && [ -f "$bld/onnxcc/digits/digits_weights.c" ] ||
	bad "no digits.c, digits.h, digits_weights.c in $bld/onnxcc/digits"

# the same with Ninja (ninja-build, make deps-install)
command -v ninja >/dev/null || { bad "ninja is not installed (make deps-install)"; exit 1; }
if cmake -G Ninja -S "$src/examples/cmake" -B "$tmp/ninja" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cfgn.log" 2>&1 &&
	cmake --build "$tmp/ninja" >"$tmp/n1.log" 2>&1; then
	check_app "$tmp/ninja" "cmake -G Ninja"
	cmake --build "$tmp/ninja" >"$tmp/n2.log" 2>&1
	grep -q "no work to do" "$tmp/n2.log" && ok "cmake -G Ninja: a build with nothing changed does nothing" ||
		{ bad "cmake -G Ninja: a build with nothing changed did something"; cat "$tmp/n2.log"; }
else
	bad "cmake -G Ninja: configure or build"; cat "$tmp/cfgn.log" "$tmp/n1.log"
fi

# 3. no change: no onnxcc; the model or onnxcc touched: onnxcc again
# (a second's sleep first: file times may be as coarse as the clock tick)
touch "$tmp/mark"
cmake --build "$bld" >"$tmp/b2.log" 2>&1 || bad "the second build failed"
if newer "$gen" "$tmp/mark" || grep -q "onnxcc: compiling" "$tmp/b2.log"; then
	bad "a build with nothing changed compiled the model again"
else
	ok "a build with nothing changed runs no onnxcc"
fi
for t in "$src/examples/digits/digits.onnx" "$prefix/bin/onnxcc"; do
	sleep 1
	touch "$tmp/mark" "$t"
	cmake --build "$bld" >"$tmp/b3.log" 2>&1 || bad "the build after touching $t failed"
	if newer "$gen" "$tmp/mark" && grep -q "onnxcc: compiling" "$tmp/b3.log"; then
		ok "touching $(basename "$t") compiles the model again"
	else
		bad "touching $t did not compile the model again"; cat "$tmp/b3.log"
	fi
	check_app "$bld" "after touching $(basename "$t")"
done

# 4. a moved prefix
moved="$tmp/moved prefix"
mv "$prefix" "$moved"
if cmake -S "$src/examples/cmake" -B "$tmp/build2" -DCMAKE_PREFIX_PATH="$moved" >"$tmp/cfg2.log" 2>&1 &&
	cmake --build "$tmp/build2" >"$tmp/b4.log" 2>&1; then
	grep -q "$moved/bin/onnxcc" "$tmp/build2/CMakeCache.txt" "$tmp/b4.log" ||
		grep -rqF "$moved/bin/onnxcc" "$tmp/build2/CMakeFiles" || bad "the moved prefix: its onnxcc was not the one run"
	check_app "$tmp/build2" "a moved prefix"
else
	bad "the moved prefix: configure or build"; cat "$tmp/cfg2.log" "$tmp/b4.log"
fi
mv "$moved" "$prefix"

# 5. the Make include
mk=$tmp/mk
mkdir -p "$mk"
cp examples/cmake/main.c examples/digits/font.h examples/digits/digits.onnx "$mk/"
cat >"$mk/Makefile" <<MK
include $prefix/share/onnxcc/onnxcc.mk
ONNXCC_FLAGS = --cpu generic
all: app1 app2
# the pattern rule: digits.c, digits.h, digits_weights.c beside digits.onnx,
# reached through make's own %.o: %.c
CFLAGS = -std=c11 -O2
app1: main.o digits.o digits_weights.o
	\$(CC) -o \$@ \$^ -lm
main.o: digits.h
# the macro: into gen/
\$(call onnxcc_model,digits.onnx,gen/digits.c,--name digits)
app2: main.c gen/digits.c gen/digits_weights.c gen/digits.h
	\$(CC) -std=c11 -O2 -I. -Igen -o \$@ main.c gen/digits.c gen/digits_weights.c -lm
MK
if make --no-print-directory -C "$mk" >"$tmp/mk1.log" 2>&1; then
	for a in app1 app2; do
		if "$mk/$a" >"$tmp/app.out" && cmp -s "$tmp/app.out" "$tmp/direct.out"; then
			ok "onnxcc.mk: $a prints $(tail -n 1 "$tmp/app.out"), as the direct build"
		else
			bad "onnxcc.mk: $a's output differs"; diff "$tmp/direct.out" "$tmp/app.out"
		fi
	done
	grep -q "^$prefix/bin/onnxcc digits.onnx -o digits.c" "$tmp/mk1.log" || bad "onnxcc.mk: ONNXCC is not the installed onnxcc"
	[ -f "$mk/digits.c" ] && [ -f "$mk/digits_weights.c" ] || bad "onnxcc.mk: make deleted the generated files"
	make --no-print-directory -C "$mk" >"$tmp/mk2.log" 2>&1
	grep -q "onnxcc" "$tmp/mk2.log" && bad "onnxcc.mk: nothing changed, but onnxcc ran again" ||
		ok "onnxcc.mk: nothing changed, nothing runs"
	sleep 1
	touch "$mk/digits.onnx"
	make --no-print-directory -C "$mk" >"$tmp/mk3.log" 2>&1
	[ "$(grep -c "bin/onnxcc digits.onnx" "$tmp/mk3.log")" = 2 ] && ok "onnxcc.mk: the model touched, both rules run onnxcc again" ||
		{ bad "onnxcc.mk: touching the model did not remake both"; cat "$tmp/mk3.log"; }
else
	bad "make with onnxcc.mk"; cat "$tmp/mk1.log"
fi

# 6. uninstall
if make --no-print-directory uninstall PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1; then
	if [ -e "$prefix" ]; then
		bad "make uninstall left:"; find "$prefix"
	else
		ok "make uninstall removed the prefix and everything in it"
	fi
else
	bad "make uninstall"; cat "$tmp/uninstall.log"
fi

if [ "$fails" -gt 0 ]; then
	echo "install: $fails checks failed"
	exit 1
fi
echo "install: all checks passed"
