/* gradient.c: placeholder (being written). */
#include "expand.h"

int ox_expand_gradient(ox_graph *g, ox_id nid)
{
	return ox_error(g, &g->nodes[nid], "Gradient is not implemented yet");
}
