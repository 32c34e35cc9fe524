/* fuzz_compile.c: libFuzzer harness over the whole compiler.
 *
 * The input bytes are a model file: frontend (protobuf, import, shape
 * inference), every pass of the pipeline with the verifier after each,
 * and C emission (network, header, weights and the --main program) into a
 * temporary folder, as `onnxcc model.onnx -o net.c --main` does. A bad
 * model must end in an error message; a crash, a sanitizer report, a leak,
 * a timeout or an allocation over the limit is a finding.
 * Built by `make fuzz-build` (tests/fuzz/README.md). */
#include "../../codegen/codegen.h"
#include "../../frontend/frontend.h"
#include "../../opt/opt.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], model[300], out[300];

static void clean(void)
{
	static const char *const names[] = {"net.c", "net.h", "net_weights.c", "net_weights.c.bin",
	                                    "net_main.c", NULL};
	char p[320];
	for (int i = 0; names[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
}

static void bye(void)
{
	clean();
	unlink(model);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/oxfuzz.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("fuzz_compile: mkdtemp");
		exit(2);
	}
	snprintf(model, sizeof model, "%s/model.onnx", dir);
	snprintf(out, sizeof out, "%s/net.c", dir);
	atexit(bye);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(model, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		perror("fuzz_compile: writing the model");
		exit(2);
	}
	ox_graph *g = ox_fe_load(model);
	if (!g)
		return 0;
	g->string_capacity = 256;
	g->target = ox_target_default();
	g->opt = 1;
	g->winograd = 1;
	if (!ox_opt_run(g, 1, NULL)) {
		ox_cg_stats st = {0};
		ox_cg_opts o = {.out_c = out, .prefix = "net", .model = "model.onnx", .with_main = 1, .weights = OX_CG_WEIGHTS_EMBED, .stats = &st};
		ox_cg_emit_c(g, &o);
	}
	ox_ir_free(g);
	clean();
	return 0;
}
