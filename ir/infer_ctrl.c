/* infer_ctrl.c: the infer column of the ops opt/expand.c replaces (If,
 * Loop, Scan, the sequence and optional ops, FlexAttention). fold expands
 * them instead of inferring them, so this runs only when some other path
 * (e.g. an IR text read back without fold) meets one: it says so. */
#include "ir.h"

int infer_ctrl(ox_graph *g, ox_node *n)
{
	return ox_error(g, n, "%s is expanded at compile time by opt/expand.c (during fold) and cannot be "
			"inferred on its own", n->optype);
}
