/* qemu_insns.c: a QEMU TCG plugin that counts the guest instructions a
 * program executes, for bench/arm_insns.sh (qemu-user: qemu-aarch64
 * -plugin ./qemu_insns.so ./prog). At exit it writes "insns N" to the
 * file named by the plugin's argument out=FILE (else to QEMU's log, which
 * -d plugin shows).
 *
 * Debian's qemu-user 7.2 loads plugins but ships neither one nor the
 * header (qemu-plugin.h), so the few entry points used are declared
 * here, as in QEMU 7.2's plugin API (version 1). Each
 * translated block adds its instruction count to one counter when it
 * executes (an inline add, no callback), so the count is exact for a
 * single-threaded guest: blocks are not left half-way but by a fault.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	/* (more fields follow: not read) */
} qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
					      uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
void qemu_plugin_outs(const char *string);

EXPORT int qemu_plugin_version = 1;

static uint64_t insns;
static const char *out;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *p)
{
	(void)id, (void)p;
	char line[64];
	snprintf(line, sizeof line, "insns %" PRIu64 "\n", insns);
	FILE *f = out ? fopen(out, "w") : NULL;
	if (f) {
		fputs(line, f);
		fclose(f);
	} else
		qemu_plugin_outs(line);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit, NULL);
	return 0;
}
