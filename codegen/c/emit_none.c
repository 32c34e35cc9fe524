/* emit_none.c: the emit column of ops that never reach codegen (control
 * flow, sequences, optionals: opt/expand.c replaces them by plain ops). */
#include "../cg.h"

int emit_none(ox_cg *cg, ox_graph *g, ox_node *n)
{
	(void)cg;
	(void)g;
	ox_die("%s reached codegen: it should have been expanded", n->optype);
}
