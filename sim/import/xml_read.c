/* sim/import/xml_read.c: attributes, numbers, reports and small rotations for the importers. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/import/xml_read.h"

#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/file_read.h"
#include "sim/json_read.h"

void imp__init(imp_ctx *c, const char *file, const sim_import_options *o, char *err,
               size_t err_sz) {
  memset(c, 0, sizeof *c);
  c->file = file;
  c->opt = o;
  c->err = err;
  c->err_sz = err_sz;
  if (err_sz > 0) {
    err[0] = '\0';
  }
}

static long line_of(const xmlNode *node) { return node ? (long)xmlGetLineNo(node) : 0; }

const char *imp__file_of(const imp_ctx *c, const xmlNode *node) {
  for (const xmlNode *n = node; n && n->type == XML_ELEMENT_NODE; n = n->parent) {
    if (n->_private) {
      return n->_private;
    }
  }
  return c->file;
}

int imp__fail(imp_ctx *c, const xmlNode *node, const char *fmt, ...) {
  if (c->failed || c->err_sz == 0) {
    c->failed = 1;
    return -1;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  long line = line_of(node);
  if (line > 0) {
    snprintf(c->err, c->err_sz, "%s:%ld: %s", imp__file_of(c, node), line, msg);
  } else {
    snprintf(c->err, c->err_sz, "%s: %s", c->file, msg);
  }
  c->failed = 1;
  return -1;
}

int imp__report(imp_ctx *c, const xmlNode *node, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->opt && c->opt->strict) {
    return imp__fail(c, node, "%s (an error with --strict)", msg);
  }
  for (int i = 0; i < c->nreports; i++) {
    if (strcmp(c->reports[i].message, msg) == 0) {
      c->reports[i].count++;
      return 0;
    }
  }
  if (c->nreports < IMP_REPORTS_MAX) {
    imp_report *r = &c->reports[c->nreports++];
    snprintf(r->message, sizeof r->message, "%s", msg);
    r->file = imp__file_of(c, node);
    r->line = line_of(node);
    r->count = 1;
  }
  return 0;
}

void imp__flush_reports(imp_ctx *c) {
  if (!c->opt || !c->opt->report) {
    return;
  }
  for (int i = 0; i < c->nreports; i++) {
    const imp_report *r = &c->reports[i];
    char line[400];
    if (r->count > 1) {
      snprintf(line, sizeof line, "%s:%ld: %s (%d times; first here)", r->file, r->line,
               r->message, r->count);
    } else {
      snprintf(line, sizeof line, "%s:%ld: %s", r->file, r->line, r->message);
    }
    c->opt->report(c->opt->report_ctx, line);
  }
}

/* libxml2 reports parse errors through a callback: keep the first, with its line */
static void on_xml_error(void *ctx, const xmlError *e) {
  imp_ctx *c = ctx;
  if (c->failed || !e || e->level < XML_ERR_ERROR) {
    return;
  }
  char msg[300];
  snprintf(msg, sizeof msg, "%s", e->message ? e->message : "invalid XML");
  size_t n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) {
    msg[--n] = '\0';
  }
  snprintf(c->err, c->err_sz, "%s:%d: invalid XML: %s", c->parsing ? c->parsing : c->file,
           e->line, msg);
  c->failed = 1;
}

static void on_xml_error_compat(void *ctx, xmlErrorPtr e) { on_xml_error(ctx, e); }

/* An attribute value holding an entity reference (model="x&n;y", n declared in the document's
 * DTD) is a list of nodes: text "x", the reference, text "y". The importers read an attribute
 * as one text, so each such list becomes the one text node of its expanded value. */
static int whole_value(xmlDoc *doc, xmlAttr *a) {
  const xmlNode *t = a->children;
  if (!t || (t->type == XML_TEXT_NODE && !t->next)) {
    return 0;
  }
  xmlChar *value = xmlNodeListGetString(doc, a->children, 1);
  xmlNode *text = xmlNewDocText(doc, value ? value : (const xmlChar *)"");
  xmlFree(value);
  if (!text) {
    return -1;
  }
  xmlFreeNodeList(a->children);
  text->parent = (xmlNode *)a;
  a->children = a->last = text;
  return 0;
}

xmlNode *imp__next_in_order(xmlNode *n) {
  if (n->children && n->type == XML_ELEMENT_NODE) {
    return n->children;
  }
  while (n && !n->next) {
    n = n->parent;
    if (n && n->type == XML_DOCUMENT_NODE) {
      n = NULL;
    }
  }
  return n ? n->next : NULL;
}

/* every element of the document, in document order, without recursion (bodies nest deeply) */
static int whole_attribute_values(xmlDoc *doc) {
  xmlNode *n = xmlDocGetRootElement(doc);
  while (n) {
    if (n->type == XML_ELEMENT_NODE) {
      for (xmlAttr *a = n->properties; a; a = a->next) {
        if (whole_value(doc, a)) {
          return -1;
        }
      }
    }
    n = imp__next_in_order(n);
  }
  return 0;
}

xmlDoc *imp__parse(imp_ctx *c) { return imp__parse_file(c, c->file); }

xmlDoc *imp__parse_file(imp_ctx *c, const char *path) {
  xmlParserCtxt *p = xmlNewParserCtxt();
  if (!p) {
    imp__fail(c, NULL, "out of memory");
    return NULL;
  }
  /* the bytes through the one reader of files (a FIFO would block libxml2's own open) */
  size_t size = 0;
  char *text = sim_file_read(path, 0, SIM_JSON_FILE_MAX, &size, c->err, c->err_sz);
  if (!text) {
    xmlFreeParserCtxt(p);
    c->failed = 1;
    return NULL;
  }
  c->parsing = path;
  xmlSetStructuredErrorFunc(c, on_xml_error_compat);
  /* no network, no entity expansion from outside the file, no DTD loading */
  xmlDoc *doc = xmlCtxtReadMemory(p, text, (int)size, path, NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
  xmlSetStructuredErrorFunc(NULL, NULL);
  c->parsing = NULL;
  xmlFreeParserCtxt(p);
  free(text);
  if (!doc) {
    if (!c->failed && path == c->file) {
      imp__fail(c, NULL, "cannot read or parse the file");
    } else if (!c->failed) {
      imp__fail(c, NULL, "%s: cannot read or parse the included file", path);
    }
    return NULL;
  }
  if (c->failed) { /* recovered from an error: still refuse the file */
    xmlFreeDoc(doc);
    return NULL;
  }
  if (whole_attribute_values(doc)) {
    xmlFreeDoc(doc);
    imp__fail(c, NULL, "out of memory");
    return NULL;
  }
  return doc;
}

int imp__is(const xmlNode *node, const char *name) {
  return node && node->type == XML_ELEMENT_NODE && strcmp((const char *)node->name, name) == 0;
}

const char *imp__name(const xmlNode *node) { return (const char *)node->name; }

const xmlNode *imp__child(const xmlNode *el, const char *name) {
  for (const xmlNode *k = el ? el->children : NULL; k; k = k->next) {
    if (imp__is(k, name)) {
      return k;
    }
  }
  return NULL;
}

const char *imp__attr(const xmlNode *node, const char *name) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    if (strcmp((const char *)a->name, name) == 0) {
      const xmlNode *t = a->children;
      return t && t->content ? (const char *)t->content : "";
    }
  }
  return NULL;
}

int imp__numbers(imp_ctx *c, const xmlNode *node, const char *attr, const char *text,
                 double *out, int min_n, int max_n) {
  int n = 0;
  const char *s = text;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
      s++;
    }
    if (*s == '\0') {
      break;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || n >= max_n) {
      break;
    }
    out[n++] = v;
    s = end;
    if (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
      n = -1;
      break;
    }
  }
  while (n >= 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
    s++;
  }
  if (n < min_n || *s != '\0') {
    if (min_n == max_n) {
      return imp__fail(c, node, "<%s %s=\"%s\">: expected %d finite numbers", imp__name(node),
                       attr, text, max_n);
    }
    return imp__fail(c, node, "<%s %s=\"%s\">: expected %d to %d finite numbers",
                     imp__name(node), attr, text, min_n, max_n);
  }
  return n;
}

int imp__check_attrs(imp_ctx *c, const xmlNode *node, const char *const *read,
                     const char *why) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    int known = 0;
    for (const char *const *k = read; *k && !known; k++) {
      known = strcmp(*k, (const char *)a->name) == 0;
    }
    if (!known && imp__report(c, node, "<%s %s> ignored: %s", imp__name(node),
                              (const char *)a->name, why) != 0) {
      return -1;
    }
  }
  return 0;
}

cJSON *imp__json_vector(const double *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i] == 0 ? 0.0 : v[i])); /* no "-0" */
  }
  return a;
}

void imp__mujoco_options(cJSON *root) {
  const double g[3] = {0, 0, -9.81};
  cJSON_AddNumberToObject(root, "timestep", 0.002);
  cJSON_AddStringToObject(root, "integrator", "euler");
  cJSON_AddItemToObject(root, "gravity", imp__json_vector(g, 3));
  cJSON_AddStringToObject(root, "solver", "newton");
  cJSON_AddNumberToObject(root, "solver_iterations", 100);
  cJSON_AddNumberToObject(root, "solver_tolerance", 1e-8);
  cJSON_AddStringToObject(root, "cone", "pyramidal");
  cJSON_AddNumberToObject(root, "impratio", 1);
}

void imp__quat_mul(double out[4], const double a[4], const double b[4]) {
  double r[4] = {
      a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
      a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
      a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
      a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  };
  memcpy(out, r, sizeof r);
}

void imp__quat_to_mat(double R[9], const double q[4]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = w * w + x * x - y * y - z * z;
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = w * w - x * x + y * y - z * z;
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = w * w - x * x - y * y + z * z;
}

/* the largest of w, x, y, z first (Shepperd's method), so no division by a small number */
void imp__mat_to_quat(double q[4], const double R[9]) {
  const double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr);
    q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
  }
  if (q[0] < 0) {
    for (int i = 0; i < 4; i++) {
      q[i] = -q[i];
    }
  }
}

void imp__rotate(double out[3], const double R[9], const double v[3]) {
  double r[3];
  for (int i = 0; i < 3; i++) {
    r[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
  }
  memcpy(out, r, sizeof r);
}

void imp__rotate_inertia(double out[9], const double R[9], const double in[9]) {
  double RI[9], r[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      RI[3 * i + j] = R[3 * i] * in[j] + R[3 * i + 1] * in[3 + j] + R[3 * i + 2] * in[6 + j];
    }
  }
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      r[3 * i + j] = RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
    }
  }
  /* exactly symmetric, so the loader's symmetry check sees no round-off */
  for (int i = 0; i < 3; i++) {
    for (int j = i + 1; j < 3; j++) {
      double m = 0.5 * (r[3 * i + j] + r[3 * j + i]);
      r[3 * i + j] = r[3 * j + i] = m;
    }
  }
  memcpy(out, r, sizeof r);
}

/* the directory of a path ("." for a bare name), into out */
static void dir_of(char *out, size_t out_sz, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(out, out_sz, ".");
  } else {
    snprintf(out, out_sz, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  }
}

/* 0 and the absolute path into out when dir/name exists and may be read (not opened here: the
 * mesh reader, sim_file_open, refuses what is not a regular file, with its name) */
static int try_file(char *out, size_t out_sz, const char *dir, const char *name) {
  char joined[4096];
  if (snprintf(joined, sizeof joined, "%s/%s", dir, name) >= (int)sizeof joined) {
    return -1;
  }
  char *real = realpath(joined, NULL);
  const int found = real && access(real, R_OK) == 0;
  if (found) {
    snprintf(out, out_sz, "%s", real);
  }
  free(real);
  return found ? 0 : -1;
}

int imp__mesh_file(char *out, size_t out_sz, const char *model_file, const char *dir,
                   const char *name) {
  char base[4096], here[4096];
  dir_of(base, sizeof base, model_file);
  if (strncmp(name, "file://", 7) == 0) {
    name += 7;
  }
  if (strncmp(name, "package://", 10) == 0) {
    const char *pkg = name + 10, *rest = strchr(pkg, '/');
    if (!rest) {
      return -1;
    }
    snprintf(here, sizeof here, "%s", base);
    for (int up = 0; up < 64; up++) { /* this directory, then its parents up to the root */
      if (try_file(out, out_sz, here, pkg) == 0 || try_file(out, out_sz, here, rest + 1) == 0) {
        return 0;
      }
      char parent[4096];
      if (snprintf(parent, sizeof parent, "%s/..", here) >= (int)sizeof parent) {
        return -1;
      }
      char *real = realpath(parent, NULL);
      const int top = !real || strcmp(real, here) == 0;
      snprintf(here, sizeof here, "%s", real ? real : "/");
      free(real);
      if (top) {
        break;
      }
    }
    return -1;
  }
  if (name[0] == '/') {
    return try_file(out, out_sz, "", name);
  }
  if (dir && dir[0] == '/') {
    return try_file(out, out_sz, dir, name);
  }
  if (dir) {
    snprintf(here, sizeof here, "%s/%s", base, dir);
    return try_file(out, out_sz, here, name);
  }
  return try_file(out, out_sz, base, name);
}
