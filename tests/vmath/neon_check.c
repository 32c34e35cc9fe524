/* neon_check.c: templates/vf.c and vmath.c compiled for AArch64 NEON by a
 * cross compiler (clang --target=aarch64-linux-gnu, no AArch64 libc
 * needed), so the NEON rendering at least builds on an x86 machine
 * (tests/vmath/run.sh; running it needs an AArch64 machine). */
#include <stdint.h>
#define OX_VW 4
#define OX_UNUSED __attribute__((unused))
#define INFINITY __builtin_inff()
float sqrtf(float);
#ifndef OX_STATIC /* (the templates' file-scope storage class: codegen/text.c, ox_cg_static) */
#define OX_STATIC static
#endif
#include "../../templates/vf.c"
#include "../../templates/vmath.c"
#ifndef OX_VF_NEON
#error "the NEON rendering was not selected"
#endif
void check_transpose(ox_vf *r);
void check_transpose(ox_vf *r) { ox_vf_transpose(r); }
ox_vf check(ox_vf x);
ox_vf check(ox_vf x)
{
	return ox_vf_add(ox_vf_add(ox_vf_gelu(x), ox_vf_gelu_tanh(x)), ox_vf_add(ox_vf_sigmoid(x), ox_vf_tanh(x)));
}
