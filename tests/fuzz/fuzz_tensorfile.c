/* fuzz_tensorfile.c: libFuzzer harness for the tensor file readers of the
 * --main program (runtime_min/ox_main.c, included without its main as
 * tests/e2e/oxcmp.c does): the bytes are read as the program reads an
 * input file, a .npy when they start with its magic, else a TensorProto,
 * and also as a SequenceProto (a sequence input's file). Every tensor read
 * is checked for the invariants the program relies on, then freed.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined tests/fuzz/fuzz_tensorfile.c \
 *       -o build/fuzz/fuzz_tensorfile
 *   build/fuzz/fuzz_tensorfile tests/fuzz/corpus/tensorfile
 */
#define OX_NO_MAIN
#include "../../runtime_min/ox_main.c"

/* what a successful read promises: a known dtype, rank in range, numel
 * the product of the dims, data present (strings: numel C strings) */
static void check(const oxt_tensor *t)
{
	size_t n = 1;
	if (oxt_dtsize(t->dtype) == 0 || t->rank < 0 || t->rank > OXT_MAXRANK || !t->data)
		abort();
	for (int i = 0; i < t->rank; i++) {
		if (t->shape[i] < 0)
			abort();
		n *= (size_t)t->shape[i];
	}
	if (n != t->numel)
		abort();
	if (t->dtype == OXT_STRING)
		for (size_t i = 0; i < t->numel; i++)
			if (!((char **)t->data)[i] || strlen(((char **)t->data)[i]) == SIZE_MAX)
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	oxt_tensor t;
	memset(&t, 0, sizeof t);
	int rc = size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0 ? oxt_read_npy(data, size, &t, err, sizeof err)
								: oxt_read_pb(data, size, &t, err, sizeof err);
	if (rc == 0) {
		check(&t);
		oxt_free(&t);
	} else {
		if (!err[0])
			abort(); /* a failure without a message */
		oxt_free(&t);
	}
	oxt_tensor *parts = NULL;
	int nparts = 0;
	if (oxt_seq_parts(data, size, &parts, &nparts, err, sizeof err) == 0)
		for (int i = 0; i < nparts; i++)
			check(&parts[i]);
	oxt_free_parts(parts, nparts);
	return 0;
}
