/* report.h: what onnxcc tells about a planned graph, for people: the
 * report (--report: text, JSON or one HTML page with a memory timeline)
 * and the picture of the graph (--graph: Graphviz DOT, or SVG through
 * Graphviz's dot). They read the graph after the pipeline and the plan's
 * statistics (opt/plan.c) and change nothing. */
#ifndef OX_REPORT_H
#define OX_REPORT_H
#include "../codegen/codegen.h"
#include "../opt/opt.h"

/* what the report is about, besides the graph */
typedef struct {
	const char *model;       /* the model file's name (no folders) */
	const char *out;         /* OUT.c as given */
	int weights;             /* OX_CG_WEIGHTS_* */
	const ox_cg_stats *cs;   /* what codegen wrote */
} ox_rp_info;

/* --report and --report=json, to f; nothing without a plan */
void ox_rp_text(FILE *f, ox_graph *g, const ox_rp_info *in);
void ox_rp_json(FILE *f, ox_graph *g, const ox_rp_info *in);
/* --report=html: one self-contained page at path (inline CSS and SVG).
 * 0, or -1 after a message. */
int ox_rp_html(const char *path, ox_graph *g, const ox_rp_info *in);

/* --graph: Graphviz DOT of the planned graph to f */
void ox_rp_dot(FILE *f, ox_graph *g, const char *model);
/* --graph PATH: PATH.svg is drawn by `dot -Tsvg` when dot is on PATH, else
 * the DOT goes to PATH with .dot for .svg (said on stderr); any other PATH
 * gets the DOT. 0, or -1 after a message. */
int ox_rp_graph(const char *path, ox_graph *g, const char *model);

/* ---- shared by the files of report/ ---- */
/* the numbers every form of the report shows, computed once */
typedef struct {
	const ox_plan_stats *ps;
	double ratio;          /* arena / lower bound */
	int64_t text;          /* .text estimate of the network code */
	int64_t flops;         /* per run (ir/cost.c) */
	int groups, covered;   /* fused functions and the ONNX nodes they compute */
	const ox_node *peak;   /* the node at the peak step, or NULL */
} ox_rp_facts;
int ox_rp_fill_facts(ox_graph *g, const ox_rp_info *in, ox_rp_facts *fa); /* -1: no plan for g */
extern const char *const ox_rp_wnames[]; /* --weights modes by OX_CG_WEIGHTS_* */
int64_t ox_rp_value_bytes(const ox_graph *g, const ox_value *v); /* logical bytes: numel x dtype size */
int64_t ox_rp_stored_bytes(const ox_graph *g, const ox_value *v); /* in its layout (blocked: C rounded up) */
/* where a node output's bytes are: "arena" (*off its offset), or "input" or
 * "weights" when it is a view of one (*off inside it) */
const char *ox_rp_place(ox_graph *g, ox_id id, int64_t *off);
/* the ox_fused list of n when it names two or more ONNX nodes, else NULL */
const ox_attr *ox_rp_fused(const ox_node *n);
/* "@blocked(16)" as the IR text form writes a layout; "" when plain */
void ox_rp_layout_str(const ox_value *v, char *buf, size_t n);
/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when s[0]
 * starts none: names are bytes, and the DOT and HTML writers show such a
 * byte as \xNN rather than pass it on. */
int ox_rp_utf8_len(const unsigned char *s);
#endif
