/* target.c: the table of CPU targets (--cpu) and native detection.
 *
 * generic is plain C11: 4-lane vectors (GCC/clang vector extensions, which
 * every compiler for every architecture lowers, SSE2 on any x86-64; a
 * struct of 4 floats for other compilers), no flags beyond -O2, so the
 * output builds anywhere. The x86-64 levels and armv8-a name a vector width
 * and flags; native is the best of them this machine runs, with
 * -march=native. Tile sizes: accumulators + weight vectors + one broadcast
 * within the register file (measured in bench/, docs/benchmarks.md).
 * Winograd's figures (transform cycles, bytes a cycle from memory and L3)
 * were fitted to tools/wino_calibrate.sh on a Zen 4 (docs/optimizer.md):
 * x86-64-v4 with AVX-512, x86-64-v3 with AVX2, generic with SSE2; armv8-a
 * was not measured and borrows x86-64-v3's. armv8.2-a+dotprod is armv8-a's
 * row with the flags of the int8 dot product (SDOT/UDOT), which no kernel
 * uses yet: the flags are all that differ so far.
 */
#include "target.h"
#include <string.h>

const ox_target ox_targets[] = {
	{"generic", "portable C11, 4-lane vectors, no flags (the default)", 4, 16, 0, "",
	 "", {12, 6, 4, 3}, 6, 2, 256, {20, 60}, {8, 23}, 18, 55},
	{"x86-64-v3", "AVX2 + FMA (Haswell, Zen 1 and later), 8 lanes", 8, 16, 1, "defined(__AVX2__) && defined(__FMA__)",
	 "-march=x86-64-v3", {12, 6, 4, 3}, 6, 2, 256, {45, 210}, {17, 80}, 12, 37},
	{"x86-64-v4", "AVX-512 F/BW/DQ/VL (Skylake-X, Zen 4 and later), 16 lanes", 16, 32, 1, "defined(__AVX512F__)",
	 "-march=x86-64-v4", {28, 14, 8, 7}, 14, 2, 256, {45, 210}, {17, 80}, 20, 62},
	{"armv8-a", "AArch64 with NEON, 4 lanes", 4, 32, 1, "defined(__ARM_NEON)",
	 "-march=armv8-a", {24, 12, 7, 6}, 12, 2, 256, {45, 210}, {17, 80}, 12, 37},
	{"armv8.2-a+dotprod", "AArch64 with NEON and the int8 dot product (Cortex-A55/A75 and later), 4 lanes", 4, 32, 1,
	 "defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD)",
	 "-march=armv8.2-a+dotprod", {24, 12, 7, 6}, 12, 2, 256, {45, 210}, {17, 80}, 12, 37},
	/* cores by name: the rows above with the compiler's tuning for them */
	{"cortex-a53", "Cortex-A53 (Raspberry Pi 3, many SoCs): armv8-a with -mcpu=cortex-a53", 4, 32, 1,
	 "defined(__ARM_NEON)", "-mcpu=cortex-a53", {24, 12, 7, 6}, 12, 2, 256, {45, 210}, {17, 80}, 12, 37},
	{"cortex-a76", "Cortex-A76 (Raspberry Pi 5, phones): armv8.2-a+dotprod with -mcpu=cortex-a76", 4, 32, 1,
	 "defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD)", "-mcpu=cortex-a76", {24, 12, 7, 6}, 12, 2, 256,
	 {45, 210}, {17, 80}, 12, 37},
	{"neoverse-n1", "Neoverse N1 (Graviton2, Ampere Altra): armv8.2-a+dotprod with -mcpu=neoverse-n1", 4, 32, 1,
	 "defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD)", "-mcpu=neoverse-n1", {24, 12, 7, 6}, 12, 2, 256,
	 {45, 210}, {17, 80}, 12, 37},
	{NULL, NULL, 0, 0, 0, NULL, NULL, {0, 0, 0, 0}, 0, 0, 0, {0, 0}, {0, 0}, 0, 0},
};

/* native: the row this machine runs best, with the flags of the machine */
static ox_target native;

static const ox_target *detect(void)
{
	const char *base = "generic";
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
		base = "x86-64-v4";
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		base = "x86-64-v3";
#elif defined(__aarch64__)
	base = "armv8-a";
#endif
	for (const ox_target *t = ox_targets; t->name; t++)
		if (!strcmp(t->name, base))
			native = *t;
	native.name = "native";
	native.about = base;
	native.cflags = strcmp(base, "generic") ? "-march=native" : "";
	return &native;
}

const ox_target *ox_target_find(const char *name)
{
	if (!strcmp(name, "native"))
		return detect();
	for (const ox_target *t = ox_targets; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

const ox_target *ox_target_default(void)
{
	return &ox_targets[0];
}
