/* elide.c: remove Identity, inference-mode Dropout and a Cast to the
 * type its input has.
 *
 * Requires: inferred graph. The output's uses (and graph-output slots)
 * are redirected to the input; graph output names are kept in
 * g->output_names, so the user-visible interface does not change. A
 * Dropout whose mask output is used stays (codegen fills the mask), and
 * so does one that may run in training mode with a ratio other than 0,
 * read from data (its code fails such a run: ox_ir_data_dropout_checks).
 * Invalidates: uses (refilled), node positions (compacted).
 */
#include "opt.h"
#include "../ir/family.h"

int ox_opt_elide(ox_graph *g)
{
	ox_ir_fill_uses(g);
	for (int i = 0; i < g->nnodes; i++) {
		ox_node *n = &g->nodes[i];
		/* a Cast to the type it has (PyTorch's mask.to(torch.bool) of a
		 * bool mask) is an Identity too */
		const int same_cast = n->op == OX_OP_Cast && n->in[0] >= 0 && n->out[0] >= 0 &&
				      g->vals[n->in[0]].dtype == g->vals[n->out[0]].dtype &&
				      g->vals[n->in[0]].dtype != OX_STRING;
		if (n->op != OX_OP_Identity && n->op != OX_OP_Dropout && !same_cast)
			continue;
		if (n->op == OX_OP_Dropout && n->nout > 1 && n->out[1] >= 0 &&
		    (g->vals[n->out[1]].nuses || g->vals[n->out[1]].is_output))
			continue;
		if (n->op == OX_OP_Dropout && ox_ir_data_dropout_checks(g, n))
			continue;
		if (n->in[0] < 0 || n->out[0] < 0)
			continue;
		ox_ir_replace_uses(g, n->out[0], n->in[0]);
		n->dead = 1;
	}
	ox_ir_compact(g);
	return 0;
}
