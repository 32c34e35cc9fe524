# onnxcc.mk: onnxcc for GNU make, installed by `make install` into
# PREFIX/share/onnxcc (docs/build-integration.md). In a Makefile:
#
#   include /usr/local/share/onnxcc/onnxcc.mk
#   ONNXCC_FLAGS = --cpu generic               # for every model (optional)
#
#   # 1. the pattern rule: net.c, net.h and net_weights.c beside net.onnx
#   app: main.o net.o net_weights.o
#           $(CC) -o $@ $^ -lm
#   main.o: net.h
#
#   # 2. or the macro, for an output elsewhere, a prefix or more options:
#   #    $(call onnxcc_model,MODEL,OUT.c[,OPTIONS])
#   $(call onnxcc_model,models/digits.onnx,gen/digits.c,--name digits)
#   app2: main.c gen/digits.c gen/digits_weights.c
#           $(CC) -std=c11 -O2 -Igen -o $@ $(filter %.c,$^) -lm
#
# Both make OUT.c, OUT.h and OUT_weights.c again when the model or onnxcc
# changes (the default --weights embed also writes OUT_weights.c.bin beside
# them for more than 4 KB of weights, --weights array OUT_weights.inc; they
# go with OUT_weights.c). ONNXCC is the installed onnxcc, found relative to this
# file; set it before the include to use another.

ONNXCC_MK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
ONNXCC ?= $(abspath $(ONNXCC_MK_DIR)../../bin/onnxcc)
ONNXCC_FLAGS ?=

%.c %.h %_weights.c: %.onnx $(ONNXCC)
	$(ONNXCC) $< -o $*.c $(ONNXCC_FLAGS)
# kept when make reaches them through a chain (app: net.o, net.o: net.c)
.PRECIOUS: %.c %.h %_weights.c

# $(call onnxcc_model,MODEL,OUT.c[,OPTIONS]): a rule for OUT.c that runs
# onnxcc MODEL -o OUT.c $(ONNXCC_FLAGS) OPTIONS; OUT.h and OUT_weights.c
# come with it
define onnxcc_model_rule
$(2): $(1) $$(ONNXCC)
	@mkdir -p $$(dir $$@)
	$$(ONNXCC) $$< -o $$@ $$(ONNXCC_FLAGS) $(3)
$(2:.c=.h) $(2:.c=_weights.c): $(2) ;
endef
onnxcc_model = $(eval $(call onnxcc_model_rule,$(1),$(2),$(3)))
