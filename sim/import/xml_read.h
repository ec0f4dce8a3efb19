/* sim/import/xml_read.h: what both importers need from an XML tree (libxml2): attributes as
 * numbers with messages naming file and line, the report list, and a check that every attribute
 * of an element is one the importer reads or knowingly ignores. Internal to sim/import. */
#ifndef ACHILLES_SIM_IMPORT_XML_READ_H
#define ACHILLES_SIM_IMPORT_XML_READ_H

#include <libxml/tree.h>
#include <stddef.h>

#include "sim/import/import.h"

#define IMP_REPORTS_MAX 256

#define IMP_INCLUDES_MAX 32

typedef struct imp_report {
  char message[256]; /* without the line: equal messages are counted, not repeated */
  const char *file;  /* of the first occurrence: the file read, or one it includes */
  long line;
  int count;
} imp_report;

typedef struct imp_ctx {
  const char *file;
  const sim_import_options *opt;
  char *err;
  size_t err_sz;
  int failed; /* an error has been written to err */
  imp_report reports[IMP_REPORTS_MAX];
  int nreports;
  /* the files <include>d (xml_include.c): an element copied from one carries its name in
   * _private, so messages name the file the line is in */
  char includes[IMP_INCLUDES_MAX][1024];
  int nincludes;
  const char *parsing; /* the file being parsed, for libxml2's messages */
} imp_ctx;

void imp__init(imp_ctx *c, const char *file, const sim_import_options *o, char *err,
               size_t err_sz);

/* An error at node's line (or the file when node is NULL); returns -1. The first one sticks. */
int imp__fail(imp_ctx *c, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Something in the file the model does not take: recorded for the report (strict: an error,
 * returns -1); else returns 0. */
int imp__report(imp_ctx *c, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Hands the collected reports to the caller's callback, one line each, in file order. */
void imp__flush_reports(imp_ctx *c);

/* Parses the XML file c->file; NULL (with the parser's message and line) on failure. */
xmlDoc *imp__parse(imp_ctx *c);
/* The same for another file (one the first includes). */
xmlDoc *imp__parse_file(imp_ctx *c, const char *path);
/* The file a node's line is in: c->file, or the included file it was copied from. */
const char *imp__file_of(const imp_ctx *c, const xmlNode *node);

/* MJCF's <include file="...">, anywhere in the tree, replaced by the children of the included
 * file's root element, recursively, as MuJoCo 2.2.2 does (xml_include.c). -1 with an error
 * naming the <include>'s file and line when a file is missing, unreadable, empty, included a
 * second time (a cycle among them) or one too many. */
int imp__expand_includes(imp_ctx *c, xmlDoc *doc);

/* Names are compared with these helpers so libxml2's unsigned chars stay here. */
int imp__is(const xmlNode *node, const char *name);
const char *imp__name(const xmlNode *node);
/* The first child element of el named name, or NULL (el may be NULL). */
const xmlNode *imp__child(const xmlNode *el, const char *name);
/* The node after n in document order (its first child, else the next sibling of n or of its
 * nearest ancestor that has one), NULL at the end: a walk without recursion, as bodies nest
 * deeply. */
xmlNode *imp__next_in_order(xmlNode *n);
/* The attribute's value, or NULL when absent. */
const char *imp__attr(const xmlNode *node, const char *name);

/* Space-separated numbers of a string: fills up to max, returns how many were read, or -1
 * (with an error at node naming the attribute) when the text is not max_n finite numbers with
 * at least min_n. */
int imp__numbers(imp_ctx *c, const xmlNode *node, const char *attr, const char *text,
                 double *out, int min_n, int max_n);

/* Reports each attribute of node that is not in `read` (NULL-terminated) with `why`, e.g.
 * "not modelled". Returns -1 if strict turned a report into an error. */
int imp__check_attrs(imp_ctx *c, const xmlNode *node, const char *const *read,
                     const char *why);

/* A mesh file named in the robot file, as an absolute path into out: an absolute name as it is;
 * "package://PKG/REST" as PKG/REST or REST in the robot file's directory or one of its parents
 * (the nearest first); "file://PATH" as PATH; anything else relative to `dir` (relative to the
 * robot file's directory; NULL: that directory). Returns 0 when found, -1 when no such file. */
int imp__mesh_file(char *out, size_t out_sz, const char *model_file, const char *dir,
                   const char *name);

/* A JSON array of n numbers for the converted robot, with no "-0" in it. */
struct cJSON *imp__json_vector(const double *v, int n);
/* MuJoCo 2.2.2's defaults of the options a file without <option> gets (timestep 0.002, Euler,
 * gravity −9.81 along z, Newton, 100 iterations, tolerance 1e-8, pyramidal cone, impratio 1),
 * written into a robot JSON root; the converters then write what the file sets over them. */
void imp__mujoco_options(struct cJSON *root);

/* Quaternion product and rotations used by both formats ([w x y z], row-major matrices). */
void imp__quat_mul(double out[4], const double a[4], const double b[4]);
void imp__quat_to_mat(double R[9], const double q[4]);
void imp__mat_to_quat(double q[4], const double R[9]);
void imp__rotate(double out[3], const double R[9], const double v[3]);
/* I' = R·I·Rᵀ for a symmetric 3×3 inertia. */
void imp__rotate_inertia(double out[9], const double R[9], const double in[9]);

#endif
