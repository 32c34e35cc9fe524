/* expand.h: compile-time expansion of control flow, sequences, optionals
 * and graph-attributed ops (opt/expand.c), called by fold. */
#ifndef OX_EXPAND_H
#define OX_EXPAND_H
#include "opt.h"

/* A node kept as C control flow (an If whose condition, a Loop or Scan
 * whose length, is known only at run time, or too long to unroll): while
 * fold runs, the nodes of its regions (ir.h, ox_region) are in the root
 * graph, and n->aux is this; opt/outline.c then moves each region into a
 * graph of its own, the node's body. */
typedef struct {
	int kind;        /* OX_RG_THEN (an If: r[0] then, r[1] else), OX_RG_LOOP, OX_RG_SCAN */
	int r[2];        /* its regions */
	int nin0;        /* the node's own inputs; the bodies' outputs follow them
			    (so that fold infers the node after its bodies) */
	ox_id *formal;   /* Loop, Scan: what a body starts an iteration with, the
			    outputs of a CtrlHead node in its region */
	int nformal;
	char *stacked;   /* Loop: carried value j is a sequence the body only
			    appends to, kept as a scan output (ox_value.stacked) */
	ox_id head;      /* that CtrlHead's first output (its node is found by it) */
} ox_ctrl;

/* n must be expanded rather than inferred (an OX_F_EXPAND op, or an
 * Identity of a sequence / optional) */
int ox_expand_wanted(const ox_graph *g, const ox_node *n);
/* Expand node nid: appends nodes (g->nodes may move), kills nid or leaves
 * it waiting with rewired inputs. 0; 1 when the node is now a control node
 * whose outputs are inferred (ox_ctrl); or -1 after an error. */
int ox_expand_node(ox_graph *g, ox_id nid);
/* Inline body at site: body input k is bind[k]; outs[k] receives the value
 * of body output k. Names the body captures resolve from the site's scope. */
int ox_expand_inline(ox_graph *g, ox_node *site, ox_graph *body, const ox_id *bind, int nbind, ox_id *outs);
/* error (with a --like hint) for a sequence/optional input of unknown structure */
int ox_expand_check_inputs(ox_graph *g);
/* split aggregate graph inputs/outputs into tensors; fill the port tables */
int ox_expand_ports(ox_graph *g);

/* Gradient (ai.onnx.preview.training) by reverse-mode differentiation of
 * the forward nodes between xs and y (opt/gradient.c) */
int ox_expand_gradient(ox_graph *g, ox_id nid);
/* Record each Gradient node's forward path before fold can fold it away
 * (constant xs): fold calls it before its walk. */
int ox_gradient_prepare(ox_graph *g);

/* Builders for expansions (and opt/ passes that add nodes during fold) */
const char *ox_expand_name(ox_graph *g, const char *base); /* base~N, unique */
ox_id ox_expand_value(ox_graph *g, const char *base);      /* a fresh internal value */
/* a node of op at opset; output k is out[k] or a fresh value (out may be NULL) */
ox_id ox_expand_add_node(ox_graph *g, int op, const char *name, int opset, int nin, const ox_id *in, int nout,
			 const ox_id *out);
/* node nid's first output: ox_expand_out(g, ox_expand_add_node(...)), never
 * g->nodes[ox_expand_add_node(...)], which may read g->nodes before the
 * call moves it (C leaves the order of the two unspecified) */
ox_id ox_expand_out(ox_graph *g, ox_id nid);
void ox_expand_attr_int(ox_graph *g, ox_id nid, const char *name, int64_t v);
void ox_expand_attr_ints(ox_graph *g, ox_id nid, const char *name, const int64_t *v, int n);
ox_id ox_expand_const_i64(ox_graph *g, const char *base, const int64_t *v, int n, int scalar);
#endif
