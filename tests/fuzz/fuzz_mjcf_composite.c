/* tests/fuzz/fuzz_mjcf_composite.c: libFuzzer harness for the expansion of MJCF <composite>
 * (sim/import/mjcf_composite*.c) and the MJCF converter that reads what it makes.
 *
 * Properties: any XML text either expands (no <composite> left) and converts or is refused
 * with a message naming the file, never a crash, leak or undefined behaviour; a composite
 * refused for the tendons or equalities it makes is refused by name. Inputs whose composites
 * ask for more than 4096 elements are skipped (the expansion's own bound is 1000000, whose
 * trees take longer than a fuzz iteration should). Seeded with MuJoCo's composite samples. */
#include <libxml/parser.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/import/mjcf.h"
#include "sim/import/mjcf_composite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when a count="a b c" of the text asks for more than 4096 elements */
static int too_large(const char *text) {
  for (const char *at = strstr(text, "count"); at; at = strstr(at + 1, "count")) {
    const char *q = strchr(at, '"');
    double product = 1;
    for (int i = 0; q && i < 3; i++) {
      char *end;
      const double v = strtod(q + 1, &end);
      if (end == q + 1) {
        break;
      }
      product *= v < 0 ? -v : v;
      q = end;
    }
    if (product > 4096) {
      return 1;
    }
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) {
    return 0;
  }
  memcpy(text, data, size);
  text[size] = '\0';
  if (too_large(text)) {
    free(text);
    return 0;
  }
  xmlDoc *doc = xmlReadMemory(text, (int)size, "fuzz.xml", NULL,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  free(text);
  if (!doc) {
    return 0;
  }
  static imp_ctx c;
  char err[1024] = "";
  sim_import_options o = {0, NULL, NULL};
  imp__init(&c, "fuzz.xml", &o, err, sizeof err);
  const xmlNode *top = xmlDocGetRootElement(doc);
  if (imp__expand_composites(&c, doc) != 0) {
    if (!strstr(err, "fuzz.xml")) {
      abort();
    }
  } else {
    for (xmlNode *n = xmlDocGetRootElement(doc); n; n = imp__next_in_order(n)) {
      if (imp__is(n, "composite")) {
        abort(); /* expanded, yet one is left */
      }
    }
    if (top && imp__is(top, "mujoco")) {
      cJSON *json = imp__mjcf(&c, top);
      if (!json && !strstr(err, "fuzz.xml")) {
        abort();
      }
      cJSON_Delete(json);
    }
  }
  xmlFreeDoc(doc);
  return 0;
}
