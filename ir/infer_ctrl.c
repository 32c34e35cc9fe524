/* infer_ctrl.c: the infer column of the ops opt/expand.c replaces (If,
 * Loop, Scan, the sequence and optional ops, FlexAttention). fold expands
 * them instead of inferring them, so this runs only when some other path
 * (e.g. an IR text read back without fold) meets one: it says so. */
#include "ir.h"

/* its outputs were typed when opt/expand.c made it */
int infer_ctrlhead(ox_graph *g, ox_node *n)
{
	for (int k = 0; k < n->nout; k++)
		if (n->out[k] >= 0 && !g->vals[n->out[k]].has_shape)
			return ox_error(g, n, "output %d has no type", k);
	return 0;
}

int infer_ctrl(ox_graph *g, ox_node *n)
{
	return ox_error(g, n, "%s is expanded at compile time by opt/expand.c (during fold) and cannot be "
			"inferred on its own", n->optype);
}
