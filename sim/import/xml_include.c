/* sim/import/xml_include.c: MJCF's <include file="..."/>, expanded before conversion.
 *
 * MuJoCo 2.2.2 (src/xml/xml.cc, mjIncludeXML) replaces each <include> by the child elements of
 * the included file's root element, wherever the <include> stands, then expands includes inside
 * what it inserted. Every file name is relative to the directory of the main model file, for a
 * nested include too (not to the file holding it); a file included a second time is an error,
 * which also stops cycles. We do the same on libxml2's tree, so the converters never see an
 * <include>. A copied element carries the included file's name in _private, so a message about
 * it names that file and its own line (imp__file_of).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/import/xml_read.h"

/* marks the element n and every element below it (not its siblings) as coming from `file` */
static void mark_file(xmlNode *n, const char *file) {
  n->_private = (void *)file;
  for (xmlNode *k = xmlFirstElementChild(n); k; k = xmlNextElementSibling(k)) {
    mark_file(k, file);
  }
}

/* the included file's name as an absolute path into c->includes; -1 (an error at inc) when it
 * is not found, was included before, or is one too many */
static const char *include_path(imp_ctx *c, const xmlNode *inc) {
  const char *file = imp__attr(inc, "file");
  if (!file || !file[0]) {
    imp__fail(c, inc, "<include>: the attribute file is required");
    return NULL;
  }
  if (c->nincludes == IMP_INCLUDES_MAX) {
    imp__fail(c, inc, "<include file=\"%s\">: more than %d included files", file,
              IMP_INCLUDES_MAX - 1); /* the main file holds the first place */
    return NULL;
  }
  char *path = c->includes[c->nincludes];
  if (imp__mesh_file(path, sizeof c->includes[0], c->file, NULL, file) != 0) {
    imp__fail(c, inc, "<include file=\"%s\">: no such file (names are relative to the directory "
                      "of %s, as MuJoCo reads them)", file, c->file);
    return NULL;
  }
  for (int i = 0; i < c->nincludes; i++) {
    if (strcmp(c->includes[i], path) == 0) {
      imp__fail(c, inc, "<include file=\"%s\">: %s is included a second time (MuJoCo refuses "
                        "a repeated include; a cycle of includes is one)", file, path);
      return NULL;
    }
  }
  c->nincludes++;
  return path;
}

/* replaces inc by copies of the child elements of its file's root; *next is the first of them,
 * so they are expanded in turn */
static int expand_one(imp_ctx *c, xmlDoc *doc, xmlNode *inc, xmlNode **next) {
  if (xmlFirstElementChild(inc)) {
    return imp__fail(c, inc, "<include> cannot have children");
  }
  const char *path = include_path(c, inc);
  const char *file = imp__attr(inc, "file");
  if (!path) {
    return -1;
  }
  xmlDoc *sub = imp__parse_file(c, path);
  if (!sub) {
    return -1;
  }
  const xmlNode *root = xmlDocGetRootElement(sub);
  if (!root || !xmlFirstElementChild((xmlNode *)root)) {
    xmlFreeDoc(sub);
    return imp__fail(c, inc, "<include file=\"%s\">: the file has no elements under its root",
                     file);
  }
  xmlNode *first = NULL;
  for (xmlNode *k = xmlFirstElementChild((xmlNode *)root); k; k = xmlNextElementSibling(k)) {
    xmlNode *copy = xmlDocCopyNode(k, doc, 1);
    if (!copy || !xmlAddPrevSibling(inc, copy)) {
      xmlFreeNode(copy);
      xmlFreeDoc(sub);
      return imp__fail(c, inc, "out of memory");
    }
    mark_file(copy, path); /* each copy before the <include>: the file's order is kept */
    first = first ? first : copy;
  }
  xmlFreeDoc(sub);
  *next = first;
  xmlUnlinkNode(inc);
  xmlFreeNode(inc);
  return 0;
}

int imp__expand_includes(imp_ctx *c, xmlDoc *doc) {
  /* the main file first, so a cycle back to it is stopped at the include that closes it */
  char *real = realpath(c->file, NULL);
  if (real) {
    snprintf(c->includes[0], sizeof c->includes[0], "%s", real);
    c->nincludes = 1;
  }
  free(real);
  /* document order without recursion: an expanded include's first copy is visited next */
  xmlNode *n = xmlDocGetRootElement(doc);
  while (n) {
    if (imp__is(n, "include")) {
      if (expand_one(c, doc, n, &n) != 0) {
        return -1;
      }
      continue;
    }
    n = imp__next_in_order(n);
  }
  return 0;
}
