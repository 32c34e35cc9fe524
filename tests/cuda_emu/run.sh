#!/bin/bash
# run.sh: runtime_min/ox_cuda_emu.h, the CPU emulation of CUDA behind
# --cuda-emu, by tests/cuda_emu/test_emu.cu:
# 1. built by the host C++ compiler ($CXX, default g++) against the header,
#    -Wall -Wextra -Werror, and run twice: with the default fiber switch and
#    with ucontext forced (OX_EMU_UCONTEXT=1);
# 2. compiled by nvcc (-c only: no GPU needed) when $NVCC (default
#    /usr/local/cuda/bin/nvcc) exists, to prove the same source is valid CUDA.
#
#   tests/cuda_emu/run.sh [REPO_ROOT]     exit 1 if any build or check fails
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 2
B=build/cuda_emu
mkdir -p "$B" || exit 2
CXX=${CXX:-g++}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
fails=0

echo "cuda_emu: $CXX -DOX_CUDA_EMU build"
if $CXX -x c++ -std=c++17 -O1 -Wall -Wextra -Werror -DOX_CUDA_EMU -I runtime_min \
	tests/cuda_emu/test_emu.cu -o "$B/test_emu"; then
	"$B/test_emu" || { echo "cuda_emu: FAIL (exit $?)"; fails=1; }
	echo "cuda_emu: again, with OX_EMU_UCONTEXT=1 (failures and the summary only)"
	OX_EMU_UCONTEXT=1 "$B/test_emu" > "$B/ucontext.out" 2>&1
	rc=$?
	grep -v '^ok \|^     (its message' "$B/ucontext.out"
	[ $rc -eq 0 ] || { echo "cuda_emu: FAIL with ucontext (exit $rc)"; fails=1; }
else
	echo "cuda_emu: FAIL: the emulation build"
	fails=1
fi

if [ -x "$NVCC" ]; then
	if "$NVCC" -std=c++17 -arch=sm_80 -Werror all-warnings -I runtime_min -c tests/cuda_emu/test_emu.cu -o "$B/test_emu_nvcc.o"; then
		echo "cuda_emu: nvcc -arch=sm_80 compile: ok"
	else
		echo "cuda_emu: FAIL: nvcc compile"
		fails=1
	fi
else
	echo "cuda_emu: nvcc compile skipped (this machine: no CUDA toolkit; NVIDIA's, not in Debian's main archive)"
fi
[ $fails -eq 0 ] && echo "cuda_emu: passed" || echo "cuda_emu: FAILED"
exit $fails
