/* tests/sim/test_overlap.c: self-contact at rest (sim/overlap.c, the notes of
 * sim/import/import.c).
 *
 *  - a chain whose first and third links overlap at the initial pose: reported once (bodies,
 *    geoms, depth); a parent and its child that overlap are not (the filter drops them), nor an
 *    excluded pair, nor two separate robots, nor the world's own geoms;
 *  - the arms Debian ships (dart-doc): the KUKA KR5 and the Barrett WAM report their
 *    overlapping links at load, whose contacts push with 1e5 to 1e7 N in the first step; with an
 *    exclude per reported pair they start without a contact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

/* three capsule links along x (each 0.3 long, radius 0.05) folded back so that the third lies
 * over the first; a sphere on a second robot touches the first link; a floor plane under all */
#define CHAIN(extra)                                                                               \
  "{ \"bodies\": [\n"                                                                             \
  "  { \"name\": \"l1\", \"parent\": \"world\", \"joint\": { \"name\": \"j1\", \"type\": \"hinge\",\n" \
  "    \"axis\": [0, 0, 1] }, \"inertial\": { \"mass\": 1, \"com\": [0.15, 0, 0],\n"                \
  "    \"inertia\": [1e-3, 1e-2, 1e-2, 0, 0, 0] } },\n"                                              \
  "  { \"name\": \"l2\", \"parent\": \"l1\", \"pos\": [0.3, 0, 0],\n"                               \
  "    \"joint\": { \"name\": \"j2\", \"type\": \"hinge\", \"axis\": [0, 0, 1] },\n"                \
  "    \"inertial\": { \"mass\": 1, \"com\": [0, 0.05, 0], \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } },\n" \
  "  { \"name\": \"l3\", \"parent\": \"l2\", \"pos\": [0, 0.08, 0],\n"                               \
  "    \"joint\": { \"name\": \"j3\", \"type\": \"hinge\", \"axis\": [0, 0, 1] },\n"                \
  "    \"inertial\": { \"mass\": 1, \"com\": [-0.15, 0, 0], \"inertia\": [1e-3, 1e-2, 1e-2, 0, 0, 0] } },\n" \
  "  { \"name\": \"other\", \"parent\": \"world\", \"pos\": [0.1, -0.09, 0],\n"                       \
  "    \"joint\": { \"name\": \"free\", \"type\": \"free\" },\n"                                    \
  "    \"inertial\": { \"mass\": 1, \"inertia\": [1e-3, 1e-3, 1e-3, 0, 0, 0] } } ],\n"               \
  "  \"geoms\": [\n"                                                                              \
  "    { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\", \"pos\": [0, 0, -0.02] },\n" \
  "    { \"name\": \"g1\", \"body\": \"l1\", \"type\": \"capsule\", \"size\": [0.05, 0.15],\n"      \
  "      \"pos\": [0.15, 0, 0], \"quat\": [0.7071067811865476, 0, 0.7071067811865476, 0] },\n"     \
  "    { \"name\": \"g2\", \"body\": \"l2\", \"type\": \"sphere\", \"size\": [0.06], \"pos\": [0, 0.04, 0] },\n" \
  "    { \"name\": \"g3\", \"body\": \"l3\", \"type\": \"capsule\", \"size\": [0.05, 0.15],\n"      \
  "      \"pos\": [-0.15, 0, 0], \"quat\": [0.7071067811865476, 0, 0.7071067811865476, 0] },\n"    \
  "    { \"name\": \"ball\", \"body\": \"other\", \"type\": \"sphere\", \"size\": [0.05] } ]" extra " }\n"

static void test_chain(void **state) {
  (void)state;
  sim_model *m = ts_model(CHAIN(""));
  sim_overlap pairs[8];
  const int n = sim_overlaps_at_rest(m, pairs, 8);
  for (int k = 0; k < n; k++) {
    print_message("%s / %s (%s, %s): %.4g m\n", m->bodies[pairs[k].body1].name,
                  m->bodies[pairs[k].body2].name, m->geoms[pairs[k].geom1].name,
                  m->geoms[pairs[k].geom2].name, pairs[k].depth);
  }
  /* l1 and l3 (grandparent and grandchild): the capsules' axes 0.08 apart, radii 0.05 each */
  assert_int_equal(n, 1);
  assert_int_equal(pairs[0].body1, sim_model_body(m, "l1"));
  assert_int_equal(pairs[0].body2, sim_model_body(m, "l3"));
  assert_string_equal(m->geoms[pairs[0].geom1].name, "g1");
  assert_string_equal(m->geoms[pairs[0].geom2].name, "g3");
  assert_true(fabs(pairs[0].depth - 0.02) < 1e-9);
  /* the sphere on l2 overlaps both capsules, but l2 is their parent and child: filtered; the
   * ball of the other robot touches g1, and every geom touches the floor: not self-contact */
  sim_model_free(m);
  m = ts_model(CHAIN(", \"exclude\": [ { \"body1\": \"l3\", \"body2\": \"l1\" } ]"));
  assert_int_equal(sim_overlaps_at_rest(m, pairs, 8), 0);
  sim_model_free(m);
}

typedef struct notes {
  char text[16384];
  int n;
} notes;

static void collect(void *ctx, const char *message) {
  notes *r = ctx;
  size_t used = strlen(r->text);
  snprintf(r->text + used, sizeof r->text - used, "%s\n", message);
  r->n += strstr(message, "overlap by") != NULL;
}

/* a Debian URDF: the pairs reported, the forces of the first step, and the start with every
 * reported pair excluded */
static void public_arm(const char *file, const char *pair1, const char *pair2) {
  notes r = {"", 0};
  sim_import_options o = {0, collect, &r};
  char err[1024];
  sim_model *m = sim_import_load_file(file, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  assert_non_null(strstr(r.text, pair1));
  assert_non_null(strstr(r.text, pair2));
  sim_overlap pairs[64];
  const int n = sim_overlaps_at_rest(m, pairs, 64);
  assert_int_equal(n, r.n);
  sim_data *d = sim_data_new(m);
  double fmax_before = 0;
  for (int c = 0; c < d->ncon; c++) {
    double f[3];
    sim_contact_force(m, d, c, f);
    fmax_before = fmax(fmax_before, f[0]);
  }
  const int ncon_before = d->ncon;
  sim_data_free(d);
  /* the same model with each pair excluded (as convert --exclude-overlapping writes them) */
  int *exclude = malloc(2 * (size_t)(m->nexclude + n) * sizeof *exclude);
  assert_non_null(exclude);
  if (m->nexclude > 0) {
    memcpy(exclude, m->exclude, 2 * (size_t)m->nexclude * sizeof *exclude);
  }
  for (int k = 0; k < n; k++) {
    exclude[2 * (m->nexclude + k)] = pairs[k].body1;
    exclude[2 * (m->nexclude + k) + 1] = pairs[k].body2;
  }
  free(m->exclude);
  m->exclude = exclude;
  m->nexclude += n;
  for (int i = 1; i < m->nexclude; i++) { /* sorted, as the loader keeps them */
    for (int j = i; j > 0 && (exclude[2 * j - 2] > exclude[2 * j] ||
                              (exclude[2 * j - 2] == exclude[2 * j] && exclude[2 * j - 1] > exclude[2 * j + 1]));
         j--) {
      const int a = exclude[2 * j], b = exclude[2 * j + 1];
      exclude[2 * j] = exclude[2 * j - 2], exclude[2 * j + 1] = exclude[2 * j - 1];
      exclude[2 * j - 2] = a, exclude[2 * j - 1] = b;
    }
  }
  d = sim_data_new(m);
  print_message("%s: %d pairs overlap at rest; %d contacts at t = 0 (largest normal force %.3g "
                "N), %d once they are excluded\n",
                strrchr(file, '/') + 1, n, ncon_before, fmax_before, d->ncon);
  assert_true(ncon_before > 0 && fmax_before > 1e4);
  assert_int_equal(d->ncon, 0);
  assert_int_equal(sim_overlaps_at_rest(m, pairs, 64), 0);
  ts_sim_free(m, d);
}

#define DART_DATA "/usr/share/doc/dart/data/"

static void test_public_arms(void **state) {
  (void)state;
  const char *kr5 = DART_DATA "urdf/KR5/KR5 sixx R650.urdf", *wam = DART_DATA "urdf/wam/wam.urdf";
  TS_REQUIRE("dart-doc", access(kr5, R_OK) == 0 && access(wam, R_OK) == 0);
  public_arm(kr5, "bodies \"base_link\" and \"shoulder\" overlap by",
             "bodies \"forearm\" and \"palm\" overlap by");
  public_arm(wam, "bodies \"/wam1\" and \"/wam3\" overlap by",
             "bodies \"/wam4\" and \"/wam6\" overlap by");
}

TS_MAIN(test_chain, test_public_arms)
