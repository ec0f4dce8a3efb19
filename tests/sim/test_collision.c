/* tests/sim/test_collision.c: the narrow phase against a plane (sim/collision.c).
 *
 * Closed forms (a sphere, a capsule and a box resting on a tilted plane), then random poses
 * against MuJoCo 2.2.2's own collision functions (mj_forward on a model with a plane and a
 * free body holding the shape): distance, point and the whole contact frame per contact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/collision.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/numbers.h"
#include "support/skip.h"
#if ACHILLES_HAVE_MUJOCO
#include "mjcf_writer.h"
#endif

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* rotation by angle a about x, row-major */
static void rot_x(double R[9], double a) {
  const double r[9] = {1, 0, 0, 0, cos(a), -sin(a), 0, sin(a), cos(a)};
  memcpy(R, r, sizeof r);
}

static void check_frame(const double f[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double d = f[3 * i] * f[3 * j] + f[3 * i + 1] * f[3 * j + 1] + f[3 * i + 2] * f[3 * j + 2];
      assert_true(fabs(d - (i == j)) < 1e-14);
    }
  }
  /* right-handed: t2 = n × t1 */
  assert_true(fabs(f[0] * f[4] - f[1] * f[3] - f[8]) < 1e-14);
}

/* a sphere of radius 0.1 whose centre is 0.08 above a plane tilted by 0.3 rad about x */
static void test_plane_sphere(void **state) {
  (void)state;
  double P[9], p0[3] = {0.5, -0.2, 0.1}, n[3];
  rot_x(P, 0.3);
  n[0] = P[2], n[1] = P[5], n[2] = P[8];
  double c[3] = {p0[0] + 0.3, p0[1] + 0.08 * n[1], p0[2] + 0.08 * n[2]};
  sim_contact con[SIM_COLLIDE_MAX];
  assert_int_equal(sim_collide_plane_sphere(con, 0, p0, P, c, 0.1), 1);
  assert_true(fabs(con[0].dist - (-0.02)) < 1e-15);
  for (int k = 0; k < 3; k++) {
    /* halfway into the overlap: 0.09 below the centre along the normal */
    assert_true(fabs(con[0].pos[k] - (c[k] - 0.09 * n[k])) < 1e-15);
    assert_true(fabs(con[0].frame[k] - n[k]) < 1e-15);
  }
  check_frame(con[0].frame);
  /* apart by more than the margin: nothing; within it: a contact with dist > 0 */
  double up[3] = {p0[0], p0[1] + 0.15 * n[1], p0[2] + 0.15 * n[2]};
  assert_int_equal(sim_collide_plane_sphere(con, 0, p0, P, up, 0.1), 0);
  assert_int_equal(sim_collide_plane_sphere(con, 0.06, p0, P, up, 0.1), 1);
  assert_true(fabs(con[0].dist - 0.05) < 1e-15);
}

/* a capsule lying flat (axis along world x) 0.01 into the ground, and standing on one end */
static void test_plane_capsule(void **state) {
  (void)state;
  const double ground[3] = {0, 0, 0}, size[2] = {0.05, 0.2};
  double lying[9] = {0, 0, 1, 0, 1, 0, -1, 0, 0}; /* capsule z axis = world x */
  double pos[3] = {1, 2, 0.04};
  sim_contact con[SIM_COLLIDE_MAX];
  assert_int_equal(sim_collide_plane_capsule(con, 0, ground, identity, pos, lying, size), 2);
  for (int i = 0; i < 2; i++) {
    assert_true(fabs(con[i].dist + 0.01) < 1e-15);
    assert_true(fabs(con[i].pos[0] - (1 + (i == 0 ? 0.2 : -0.2))) < 1e-15);
    assert_true(fabs(con[i].pos[2] - (-0.005)) < 1e-15);
    /* the first tangent follows the capsule's axis */
    assert_true(fabs(con[i].frame[3] - 1) < 1e-15);
    check_frame(con[i].frame);
  }
  pos[2] = 0.24;
  assert_int_equal(sim_collide_plane_capsule(con, 0, ground, identity, pos, identity, size), 1);
  assert_true(fabs(con[0].dist - (0.24 - 0.2 - 0.05)) < 1e-15);
}

/* a cube of half-size 0.1 resting 0.002 into the ground: four contacts at the bottom
 * corners; tipped on an edge: two */
static void test_plane_box(void **state) {
  (void)state;
  const double ground[3] = {0, 0, 0}, size[3] = {0.1, 0.1, 0.1};
  double pos[3] = {0, 0, 0.098};
  sim_contact con[SIM_COLLIDE_MAX];
  assert_int_equal(sim_collide_plane_box(con, 0, ground, identity, pos, identity, size), 4);
  for (int i = 0; i < 4; i++) {
    assert_true(fabs(con[i].dist + 0.002) < 1e-15);
    assert_true(fabs(fabs(con[i].pos[0]) - 0.1) < 1e-15 && fabs(fabs(con[i].pos[1]) - 0.1) < 1e-15);
    assert_true(fabs(con[i].pos[2] + 0.001) < 1e-15);
    check_frame(con[i].frame);
  }
  double R[9];
  rot_x(R, 0.78539816339744830962); /* on the edge along x: lowest points at z = −0.1·√2 relative */
  pos[2] = 0.1 * sqrt(2.0) - 0.003;
  assert_int_equal(sim_collide_plane_box(con, 0, ground, identity, pos, R, size), 2);
  assert_true(fabs(con[0].dist + 0.003) < 1e-15 && fabs(con[1].dist + 0.003) < 1e-15);
}


/* A free cylinder (radius 0.15, half-length 0.25, 3 kg) standing on the floor, and one lying on
 * it: at rest the contacts carry the weight (upright: three on the rim of the lower cap, 120°
 * apart; lying: one at each end of the lowest line). */
static void settle_cylinder(const double quat[4], int ncon_expected) {
  char json[2048];
  snprintf(json, sizeof json,
           "{ \"timestep\": 0.001, \"bodies\": [ { \"name\": \"can\", \"parent\": \"world\","
           " \"pos\": [0.1, -0.2, 0.4], \"quat\": [%.17g, %.17g, %.17g, %.17g],"
           " \"joint\": { \"name\": \"free\", \"type\": \"free\" },"
           " \"inertial\": { \"mass\": 3, \"inertia\": [0.07, 0.07, 0.034, 0, 0, 0] } } ],"
           " \"geoms\": [ { \"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\" },"
           " { \"name\": \"c\", \"body\": \"can\", \"type\": \"cylinder\", \"size\": [0.15, 0.25] } ] }",
           quat[0], quat[1], quat[2], quat[3]);
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  ts_steps(m, d, 4000);
  for (int c = 0; c < d->ncon; c++) {
    assert_int_equal(d->con_geom[2 * c], 0); /* the floor first */
  }
  const double normal = ts_normal_force(m, d);
  const double weight = 3 * 9.81;
  print_message("cylinder at rest: %d contacts, normal forces %.9g N (weight %.9g N), height "
                "%.6g m\n", d->ncon, normal, weight, d->qpos[2]);
  assert_int_equal(d->ncon, ncon_expected);
  assert_true(fabs(normal - weight) <= 1e-6 * weight);
  ts_sim_free(m, d);
}

static void test_cylinder_rests_on_plane(void **state) {
  (void)state;
  const double upright[4] = {1, 0, 0, 0}, lying[4] = {sqrt(0.5), sqrt(0.5), 0, 0};
  settle_cylinder(upright, 3);
  settle_cylinder(lying, 2);
}

/* A sphere (radius 0.1) 0.01 into the side of a cylinder (radius 0.15, half-length 0.25, axis
 * along world −y here), found by sim_collide through the general routine: the sphere first, the
 * normal along the line of centres (−x), the point inside the overlap on that line. MPR stops
 * within its tolerance (1e-6): measured, the distance is off by 3.5e-8, the point by 3e-7 off
 * the line, the normal by 1.5e-6 (MuJoCo 2.2.2 gives the same to the bit: see
 * test_cylinder_against_mujoco); bounds 1e-7, 1e-6, 1e-5. */
static void test_sphere_against_cylinder_side(void **state) {
  (void)state;
  static const char json[] =
      "{ \"bodies\": ["
      " { \"name\": \"a\", \"parent\": \"world\", \"pos\": [0.2, 0.05, 0.3],"
      "   \"joint\": { \"name\": \"ja\", \"type\": \"slide\", \"axis\": [1, 0, 0] },"
      "   \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } },"
      " { \"name\": \"b\", \"parent\": \"world\", \"pos\": [0.2, 0.05, 0.3],"
      "   \"quat\": [0.70710678118654752, 0.70710678118654752, 0, 0],"
      "   \"joint\": { \"name\": \"jb\", \"type\": \"slide\", \"axis\": [0, 0, 1] },"
      "   \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],"
      " \"geoms\": [ { \"name\": \"cyl\", \"body\": \"b\", \"type\": \"cylinder\", \"size\": [0.15, 0.25] },"
      "   { \"name\": \"ball\", \"body\": \"a\", \"type\": \"sphere\", \"size\": [0.1] } ] }";
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  d->qpos[0] = 0.24; /* centres 0.24 apart along x: 0.01 overlap */
  d->qpos[1] = 0.07; /* the cylinder 0.07 along its axis: its centre at y = −0.02 */
  sim_kinematics(m, d);
  sim_collide(m, d);
  assert_int_equal(d->ncon, 1);
  assert_int_equal(d->con_geom[0], 1); /* the sphere first */
  assert_int_equal(d->con_geom[1], 0);
  const double *pos = d->con_pos, *n = d->con_frame;
  print_message("sphere on a cylinder's side: dist %.12g, pos [%.12g %.12g %.12g], normal "
                "[%.3g %.3g %.3g]\n", d->con_dist[0], pos[0], pos[1], pos[2], n[0], n[1], n[2]);
  assert_true(fabs(d->con_dist[0] + 0.01) < 1e-7);
  assert_true(pos[0] >= 0.34 - 1e-9 && pos[0] <= 0.35 + 1e-9); /* between the two surfaces */
  assert_true(fabs(pos[1] - 0.05) < 1e-6 && fabs(pos[2] - 0.3) < 1e-6);
  assert_true(fabs(n[0] + 1) < 1e-5 && fabs(n[1]) < 1e-5 && fabs(n[2]) < 1e-5);
  check_frame(n);
  /* 0.01 apart: nothing */
  d->qpos[0] = 0.26;
  sim_kinematics(m, d);
  sim_collide(m, d);
  assert_int_equal(d->ncon, 0);
  ts_sim_free(m, d);
}

static void test_frame_hints(void **state) {
  (void)state;
  double f[9] = {0, 0, 2, 0, 0, 0, 0, 0, 0};
  assert_int_equal(sim_contact_frame(f), 0);
  check_frame(f);
  assert_true(f[2] == 1 && f[4] == 1); /* no hint: tangent 1 is world y */
  double g[9] = {0, 1, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(sim_contact_frame(g), 0);
  assert_true(g[5] == 1); /* normal along y: tangent 1 is world z */
  double bad[9] = {0.1, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(sim_contact_frame(bad), -1);
}

static double rnd01(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct found {
  int g1, g2;
  double dist;
} found;

static int cmp_found(const void *a, const void *b) {
  const found *x = a, *y = b;
  if (x->g1 != y->g1) {
    return x->g1 - y->g1;
  }
  if (x->g2 != y->g2) {
    return x->g2 - y->g2;
  }
  return (x->dist > y->dist) - (x->dist < y->dist);
}

/* The broad phase (sweep and prune) finds exactly the contacts of testing every pair the filter
 * lets through: 60 spheres, capsules and boxes on slides (the boxes in a contact group of their
 * own that touches the others but not each other), moved to new random places five times (so
 * the kept order changes). */
static void test_broad_phase_finds_every_pair(void **state) {
  (void)state;
  enum { N = 60 };
  static char json[64 * 1024];
  uint64_t s = 0x9e3779b97f4a7c15ull;
  size_t n = (size_t)snprintf(json, sizeof json, "{ \"name\": \"heap\", \"max_contacts\": 2000, "
                                                   "\"bodies\": [");
  for (int b = 0; b < N; b++) {
    n += (size_t)snprintf(json + n, sizeof json - n,
                          "%s{\"name\": \"b%d\", \"parent\": \"world\", \"pos\": [0, %.3f, %.3f],"
                          " \"joint\": {\"name\": \"j%d\", \"type\": \"slide\", \"axis\": [1, 0, 0]},"
                          " \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}}",
                          b ? "," : "", b, rnd01(&s) * 0.6, rnd01(&s) * 0.6, b);
  }
  n += (size_t)snprintf(json + n, sizeof json - n, "], \"geoms\": [");
  for (int b = 0; b < N; b++) {
    if (b % 5 == 4) {
      double q[4] = {0.5 + rnd01(&s), rnd01(&s), 0.3, rnd01(&s)};
      const double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      n += (size_t)snprintf(json + n, sizeof json - n,
                            "%s{\"name\": \"g%d\", \"body\": \"b%d\", \"type\": \"box\","
                            " \"size\": [%.3f, %.3f, %.3f], \"quat\": [%.17g, %.17g, %.17g, %.17g],"
                            " \"contype\": 2, \"conaffinity\": 1}",
                            b ? "," : "", b, b, 0.02 + 0.06 * rnd01(&s), 0.02 + 0.06 * rnd01(&s),
                            0.02 + 0.06 * rnd01(&s), q[0] / norm, q[1] / norm, q[2] / norm,
                            q[3] / norm);
    } else if (b % 3 == 2) {
      const double r = 0.03 + 0.05 * rnd01(&s), half = 0.02 + 0.1 * rnd01(&s);
      double q[4] = {0.5 + rnd01(&s), rnd01(&s), 0.3, 0};
      const double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
      n += (size_t)snprintf(json + n, sizeof json - n,
                            "%s{\"name\": \"g%d\", \"body\": \"b%d\", \"type\": \"capsule\","
                            " \"size\": [%.3f, %.3f], \"quat\": [%.17g, %.17g, %.17g, 0],"
                            " \"conaffinity\": 3}",
                            b ? "," : "", b, b, r, half, q[0] / norm, q[1] / norm, q[2] / norm);
    } else {
      n += (size_t)snprintf(json + n, sizeof json - n,
                            "%s{\"name\": \"g%d\", \"body\": \"b%d\", \"type\": \"sphere\","
                            " \"size\": [%.3f], \"conaffinity\": 3}",
                            b ? "," : "", b, b, 0.03 + 0.06 * rnd01(&s));
    }
  }
  snprintf(json + n, sizeof json - n, "] }");
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  static found swept[2000], brute[2000];
  int total = 0, nbox = 0, nfiltered = 0;
  for (int round = 0; round < 5; round++) {
    for (int k = 0; k < m->nq; k++) {
      d->qpos[k] = rnd01(&s) * 1.5 - 0.75;
    }
    sim_kinematics(m, d);
    sim_collide(m, d);
    const int ns = d->ncon;
    for (int c = 0; c < ns; c++) {
      swept[c] = (found){d->con_geom[2 * c], d->con_geom[2 * c + 1], d->con_dist[c]};
    }
    int nb = 0;
    for (int i = 0; i < m->ngeom; i++) {
      for (int j = i + 1; j < m->ngeom; j++) {
        if (sim_collision_filtered(m, i, j)) {
          nfiltered++;
          continue;
        }
        const sim_geom *a = &m->geoms[i], *b = &m->geoms[j];
        const int swap = a->type > b->type;
        const int g1 = swap ? j : i, g2 = swap ? i : j;
        const sim_geom *x = &m->geoms[g1], *y = &m->geoms[g2];
        const double *p1 = d->geom_xpos + 3 * g1, *m1 = d->geom_xmat + 9 * g1;
        const double *p2 = d->geom_xpos + 3 * g2, *m2 = d->geom_xmat + 9 * g2;
        sim_contact con[SIM_COLLIDE_MAX];
        int k = y->type == SIM_GEOM_BOX
                    ? (x->type == SIM_GEOM_SPHERE
                           ? sim_collide_sphere_box(con, 0, p1, x->size[0], p2, m2, y->size)
                           : sim_collide_capsule_box(con, 0, p1, m1, x->size, p2, m2, y->size))
                : x->type == SIM_GEOM_SPHERE && y->type == SIM_GEOM_SPHERE
                    ? sim_collide_sphere_sphere(con, 0, p1, m1, x->size[0], p2, m2, y->size[0])
                : x->type == SIM_GEOM_SPHERE
                    ? sim_collide_sphere_capsule(con, 0, p1, m1, x->size[0], p2, m2, y->size)
                    : sim_collide_capsule_capsule(con, 0, p1, m1, x->size, p2, m2, y->size);
        for (int c = 0; c < k; c++) {
          if (con[c].dist < 0) {
            brute[nb++] = (found){g1, g2, con[c].dist};
            nbox += y->type == SIM_GEOM_BOX;
          }
        }
      }
    }
    qsort(swept, (size_t)ns, sizeof *swept, cmp_found);
    qsort(brute, (size_t)nb, sizeof *brute, cmp_found);
    assert_int_equal(ns, nb);
    for (int c = 0; c < ns; c++) {
      assert_int_equal(swept[c].g1, brute[c].g1);
      assert_int_equal(swept[c].g2, brute[c].g2);
      assert_true(swept[c].dist == brute[c].dist);
    }
    total += ns;
  }
  print_message("broad phase: %d contacts (%d with a box) in 5 scenes of %d shapes, as every pair "
                "gives (%d box pairs filtered)\n", total, nbox, N, nfiltered);
  assert_true(total > 50 && nbox > 10);
  assert_int_equal(nfiltered, 5 * 12 * 11 / 2); /* the 12 boxes never meet each other */
  ts_sim_free(m, d);
}


/* One scene for the contact filter: every shape overlaps every other and the plane, so the
 * contacts found are exactly the pairs the filter lets through (gf, a cylinder, through the
 * general routine and the plane's own). b is welded to a (no joint), c
 * hangs from b, e from c; d and gd2 on f have their own contact groups; f is excluded against a
 * (but not against b). */
static const char filter_json[] =
    "{ \"name\": \"filter\", \"max_contacts\": 200,"
    "  \"bodies\": ["
    "    {\"name\": \"a\", \"parent\": \"world\", \"joint\": {\"name\": \"ja\", \"type\": \"slide\","
    "     \"axis\": [1, 0, 0]}, \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "    {\"name\": \"b\", \"parent\": \"a\","
    "     \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "    {\"name\": \"c\", \"parent\": \"b\", \"joint\": {\"name\": \"jc\", \"type\": \"hinge\","
    "     \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "    {\"name\": \"e\", \"parent\": \"c\", \"joint\": {\"name\": \"je\", \"type\": \"hinge\","
    "     \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "    {\"name\": \"d\", \"parent\": \"world\", \"joint\": {\"name\": \"jd\", \"type\": \"slide\","
    "     \"axis\": [0, 1, 0]}, \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}},"
    "    {\"name\": \"f\", \"parent\": \"world\", \"joint\": {\"name\": \"jf\", \"type\": \"slide\","
    "     \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}}],"
    "  \"geoms\": ["
    "    {\"name\": \"plane\", \"body\": \"world\", \"type\": \"plane\"},"
    "    {\"name\": \"gw\", \"body\": \"world\", \"type\": \"sphere\", \"size\": [0.3], \"pos\": [0, 0, 0.2]},"
    "    {\"name\": \"ga\", \"body\": \"a\", \"type\": \"sphere\", \"size\": [0.3], \"pos\": [0.01, 0, 0.2]},"
    "    {\"name\": \"gb\", \"body\": \"b\", \"type\": \"capsule\", \"size\": [0.3, 0.1], \"pos\": [0.02, 0, 0.2]},"
    "    {\"name\": \"gc\", \"body\": \"c\", \"type\": \"box\", \"size\": [0.3, 0.2, 0.3], \"pos\": [0.03, 0, 0.2]},"
    "    {\"name\": \"ge\", \"body\": \"e\", \"type\": \"sphere\", \"size\": [0.3], \"pos\": [0.04, 0, 0.2]},"
    "    {\"name\": \"gd\", \"body\": \"d\", \"type\": \"sphere\", \"size\": [0.3], \"pos\": [0.05, 0, 0.2],"
    "     \"contype\": 2, \"conaffinity\": 6},"
    "    {\"name\": \"gd2\", \"body\": \"f\", \"type\": \"capsule\", \"size\": [0.3, 0.1], \"pos\": [0.05, 0.01, 0.2],"
    "     \"contype\": 4, \"conaffinity\": 0},"
    "    {\"name\": \"gf\", \"body\": \"f\", \"type\": \"cylinder\", \"size\": [0.3, 0.25], \"pos\": [0.06, 0, 0.2]}],"
    "  \"exclude\": [{\"body1\": \"f\", \"body2\": \"a\"}] }";

/* the pairs of geom names in contact, each pair's names in order, the list sorted */
typedef struct name_pair {
  char a[16], b[16];
} name_pair;

static int cmp_name_pair(const void *x, const void *y) {
  const name_pair *p = x, *q = y;
  const int c = strcmp(p->a, q->a);
  return c ? c : strcmp(p->b, q->b);
}

static int add_pair(name_pair *list, int n, const char *x, const char *y) {
  const int swap = strcmp(x, y) > 0;
  snprintf(list[n].a, sizeof list[n].a, "%s", swap ? y : x);
  snprintf(list[n].b, sizeof list[n].b, "%s", swap ? x : y);
  for (int k = 0; k < n; k++) { /* one entry per pair, however many contacts it has */
    if (cmp_name_pair(&list[k], &list[n]) == 0) {
      return n;
    }
  }
  return n + 1;
}

static int filter_pairs(name_pair *list) {
  sim_model *m = ts_model(filter_json);
  sim_data *d = sim_data_new(m);
  sim_kinematics(m, d);
  sim_collide(m, d);
  int n = 0;
  for (int c = 0; c < d->ncon; c++) {
    n = add_pair(list, n, m->geoms[d->con_geom[2 * c]].name,
                 m->geoms[d->con_geom[2 * c + 1]].name);
  }
  qsort(list, (size_t)n, sizeof *list, cmp_name_pair);
  ts_sim_free(m, d);
  return n;
}

/* What the filter keeps out, by rule: weld body (a–b, world–plane, f's two), weld parent (a–c,
 * b–c, c–e), groups (gd, gd2 against the rest), excluded bodies (a–f); what it lets through
 * (a–e: grandparent; b–f: b is not a; gd–gd2: 4 & 6). */
static void test_filter_rules(void **state) {
  (void)state;
  name_pair got[64];
  const int n = filter_pairs(got);
  static const char *const expected[][2] = {
      {"ga", "ge"}, {"ga", "gw"}, {"gb", "ge"}, {"gb", "gf"}, {"gb", "gw"}, {"gc", "gf"},
      {"gc", "gw"}, {"gd", "gd2"}, {"ge", "gf"}, {"ge", "gw"}, {"gf", "gw"}, {"ga", "plane"},
      {"gb", "plane"}, {"gc", "plane"}, {"ge", "plane"}, {"gf", "plane"}};
  const int ne = (int)(sizeof expected / sizeof expected[0]);
  name_pair want[64];
  int nw = 0;
  for (int k = 0; k < ne; k++) {
    nw = add_pair(want, nw, expected[k][0], expected[k][1]);
  }
  qsort(want, (size_t)nw, sizeof *want, cmp_name_pair);
  for (int k = 0; k < n; k++) {
    print_message("  %s / %s\n", got[k].a, got[k].b);
  }
  assert_int_equal(n, nw);
  for (int k = 0; k < n; k++) {
    assert_string_equal(got[k].a, want[k].a);
    assert_string_equal(got[k].b, want[k].b);
  }
}

#if ACHILLES_HAVE_MUJOCO

/* a random unit quaternion from the xorshift state s (four uniform draws, normalised) */
static void random_quat(uint64_t *s, double q[4]) {
  double draw[4], n2 = 0;
  for (int i = 0; i < 4; i++) {
    draw[i] = ts_uniform(s, -1, 1);
  }
  for (int i = 0; i < 4; i++) {
    n2 += draw[i] * draw[i];
  }
  for (int i = 0; i < 4; i++) {
    q[i] = draw[i] / sqrt(n2);
  }
}

/* our n contacts against MuJoCo's first n (geom 0 first in each): the largest difference of
 * distance, point and frame */
static double contacts_error(const sim_contact *con, const mjData *md, int n) {
  double e = 0;
  for (int c = 0; c < n; c++) {
    const mjContact *mc = &md->contact[c];
    assert_int_equal(mc->geom1, 0);
    e = fmax(e, fabs(con[c].dist - mc->dist));
    e = fmax(e, ts_max_diff(con[c].pos, mc->pos, 3));
    e = fmax(e, ts_max_diff(con[c].frame, mc->frame, 9));
  }
  return e;
}

/* a tilted plane and a free body holding one shape; contacts compared for random poses */
static void compare_with_mujoco(const char *shape, int type) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco><option><flag gravity=\"disable\"/></option><worldbody>"
           "<geom name=\"plane\" type=\"plane\" size=\"0 0 1\" pos=\"0.1 -0.2 0.05\" "
           "quat=\"0.98 0.1 -0.15 0.05\"/>"
           "<body name=\"b\"><freejoint/><geom name=\"g\" %s/></body>"
           "</worldbody></mujoco>", shape);
  mjModel *mm = ts_mj_load_xml(xml);
  mjData *md = mj_makeData(mm);
  uint64_t s = 0x853c49e6748fea9bull + (uint64_t)type;
  int ncontact = 0;
  double e = 0;
  for (int k = 0; k < 300; k++) {
    random_quat(&s, md->qpos + 3);
    md->qpos[0] = ts_uniform(&s, -1, 1);
    md->qpos[1] = ts_uniform(&s, -1, 1);
    md->qpos[2] = ts_uniform(&s, -0.2, 0.4);
    mj_forward(mm, md);
    const double *pp = md->geom_xpos, *pm = md->geom_xmat; /* geom 0: the plane */
    const double *gp = md->geom_xpos + 3, *gm = md->geom_xmat + 9, *size = mm->geom_size + 3;
    sim_contact con[SIM_COLLIDE_MAX];
    int n = type == 0   ? sim_collide_plane_sphere(con, 0, pp, pm, gp, size[0])
            : type == 1 ? sim_collide_plane_capsule(con, 0, pp, pm, gp, gm, size)
            : type == 2 ? sim_collide_plane_box(con, 0, pp, pm, gp, gm, size)
                        : sim_collide_plane_cylinder(con, 0, pp, pm, gp, gm, size);
    assert_int_equal(n, md->ncon);
    e = fmax(e, contacts_error(con, md, n));
    ncontact += n;
  }
  print_message("%s: %d contacts in 300 poses, max difference from MuJoCo %.2g\n", shape,
                ncontact, e);
  assert_true(ncontact > 100);
  assert_true(e <= 1e-15);
  ts_mj_free(mm, md);
}

/* MuJoCo's geom type as ours */
static int our_type(int mjtype) {
  switch (mjtype) {
  case mjGEOM_SPHERE:
    return SIM_GEOM_SPHERE;
  case mjGEOM_CAPSULE:
    return SIM_GEOM_CAPSULE;
  case mjGEOM_CYLINDER:
    return SIM_GEOM_CYLINDER;
  case mjGEOM_BOX:
    return SIM_GEOM_BOX;
  case mjGEOM_MESH:
    return SIM_GEOM_MESH;
  default:
    return SIM_GEOM_PLANE;
  }
}

/* two free bodies holding round shapes; contacts compared for random poses (pos1, pos2 near
 * each other so that about half the poses touch); type 5 and up: the general (MPR) routine,
 * compared within tol */
static double pair_tolerance = 1e-14;
static double pair_margin = 0; /* the first geom's margin (the second's is half of it) */
static void compare_pair_with_mujoco(const char *shape1, const char *shape2, int type) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco><option><flag gravity=\"disable\"/></option><worldbody>"
           "<body name=\"a\"><freejoint/><geom name=\"g1\" margin=\"%.17g\" %s/></body>"
           "<body name=\"b\"><freejoint/><geom name=\"g2\" margin=\"%.17g\" %s/></body>"
           "</worldbody></mujoco>", pair_margin, shape1, 0.5 * pair_margin, shape2);
  mjModel *mm = ts_mj_load_xml(xml);
  mjData *md = mj_makeData(mm);
  uint64_t s = 0x2545f4914f6cdd1dull + (uint64_t)type;
  int ncontact = 0, ntwo = 0;
  double e = 0;
  for (int k = 0; k < 400; k++) {
    for (int body = 0; body < 2; body++) {
      double q[4];
      random_quat(&s, q);
      for (int i = 0; i < 3; i++) {
        md->qpos[7 * body + i] = ts_uniform(&s, -0.3, 0.3);
      }
      memcpy(md->qpos + 7 * body + 3, q, sizeof q);
    }
    if (k % 50 == 0) { /* now and then parallel capsules, the case with two contacts */
      for (int i = 0; i < 4; i++) {
        md->qpos[10 + i] = md->qpos[3 + i];
      }
    }
    if (type >= 3 && k % 4 == 1) { /* a box in its first's axes or 90° turned: flat contacts */
      const double h = sqrt(0.5), turn[3][4] = {{1, 0, 0, 0}, {h, h, 0, 0}, {h, 0, h, 0}};
      mju_mulQuat(md->qpos + 10, md->qpos + 3, turn[(k / 4) % 3]);
    }
    mj_forward(mm, md);
    const double *p1 = md->geom_xpos, *m1 = md->geom_xmat, *s1 = mm->geom_size;
    const double *p2 = md->geom_xpos + 3, *m2 = md->geom_xmat + 9, *s2 = mm->geom_size + 3;
    sim_contact con[SIM_COLLIDE_MAX];
    const sim_shape a = {.type = our_type(mm->geom_type[0]), .pos = p1, .mat = m1, .size = s1};
    const sim_shape b = {.type = our_type(mm->geom_type[1]), .pos = p2, .mat = m2, .size = s2};
    const double mg = pair_margin; /* the pair's: the larger of the two */
    int n = type >= 5   ? sim_collide_convex(con, mg, &a, &b)
            : type == 0 ? sim_collide_sphere_sphere(con, mg, p1, m1, s1[0], p2, m2, s2[0])
            : type == 1 ? sim_collide_sphere_capsule(con, mg, p1, m1, s1[0], p2, m2, s2)
            : type == 2 ? sim_collide_capsule_capsule(con, mg, p1, m1, s1, p2, m2, s2)
            : type == 3 ? sim_collide_sphere_box(con, mg, p1, s1[0], p2, m2, s2)
                        : sim_collide_capsule_box(con, mg, p1, m1, s1, p2, m2, s2);
    int kept = 0; /* MuJoCo keeps those nearer than the margin */
    for (int c = 0; c < n; c++) {
      if (con[c].dist < mg) {
        con[kept++] = con[c];
      }
    }
    assert_int_equal(kept, md->ncon);
    e = fmax(e, contacts_error(con, md, kept));
    ncontact += kept;
    ntwo += kept == 2;
  }
  print_message("%s / %s: %d contacts (%d poses with two) in 400 poses, max difference from "
                "MuJoCo %.2g\n", shape1, shape2, ncontact, ntwo, e);
  assert_true(ncontact > 100);
  assert_true(e <= pair_tolerance);
  ts_mj_free(mm, md);
}

/* MuJoCo's touching pairs in mm at its initial state are ours (k pairs, sorted); frees mm */
static void expect_mujoco_pairs(const char *scene, mjModel *mm, const name_pair *ours, int k) {
  mjData *md = mj_makeData(mm);
  mj_forward(mm, md);
  name_pair theirs[64];
  int n = 0;
  for (int c = 0; c < md->ncon; c++) {
    n = add_pair(theirs, n, mj_id2name(mm, mjOBJ_GEOM, md->contact[c].geom1),
                 mj_id2name(mm, mjOBJ_GEOM, md->contact[c].geom2));
  }
  qsort(theirs, (size_t)n, sizeof *theirs, cmp_name_pair);
  print_message("%s: MuJoCo and we find %d and %d touching pairs\n", scene, n, k);
  assert_int_equal(n, k);
  for (int i = 0; i < n; i++) {
    assert_string_equal(ours[i].a, theirs[i].a);
    assert_string_equal(ours[i].b, theirs[i].b);
  }
  ts_mj_free(mm, md);
}

/* the filter scene in MJCF: MuJoCo finds the same touching pairs */
static void compare_filter_with_mujoco(void) {
  static const char xml[] =
      "<mujoco><worldbody>"
      "<geom name='plane' type='plane' size='0 0 1'/>"
      "<geom name='gw' type='sphere' size='0.3' pos='0 0 0.2'/>"
      "<body name='a'><joint type='slide' axis='1 0 0'/>"
      " <geom name='ga' type='sphere' size='0.3' pos='0.01 0 0.2'/>"
      " <body name='b'><geom name='gb' type='capsule' size='0.3 0.1' pos='0.02 0 0.2'/>"
      "  <body name='c'><joint type='hinge' axis='0 0 1'/>"
      "   <geom name='gc' type='box' size='0.3 0.2 0.3' pos='0.03 0 0.2'/>"
      "   <body name='e'><joint type='hinge' axis='0 0 1'/>"
      "    <geom name='ge' type='sphere' size='0.3' pos='0.04 0 0.2'/></body>"
      "  </body></body></body>"
      "<body name='d'><joint type='slide' axis='0 1 0'/>"
      " <geom name='gd' type='sphere' size='0.3' pos='0.05 0 0.2' contype='2' conaffinity='6'/>"
      "</body>"
      "<body name='f'><joint type='slide' axis='0 0 1'/>"
      " <geom name='gd2' type='capsule' size='0.3 0.1' pos='0.05 0.01 0.2' contype='4' "
      "conaffinity='0'/>"
      " <geom name='gf' type='cylinder' size='0.3 0.25' pos='0.06 0 0.2'/></body>"
      "</worldbody><contact><exclude body1='f' body2='a'/></contact></mujoco>";
  name_pair ours[64];
  const int k = filter_pairs(ours);
  expect_mujoco_pairs("the filter scene", ts_mj_load_xml(xml), ours, k);
  /* the MJCF the reference tests write from our model (groups and excludes included) too */
  sim_model *m = ts_model(filter_json);
  expect_mujoco_pairs("the filter scene written from our model", ts_mj_compile(m), ours, k);
  sim_model_free(m);
}

static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  compare_filter_with_mujoco();
  compare_pair_with_mujoco("type=\"sphere\" size=\"0.2\"", "type=\"sphere\" size=\"0.15\"", 0);
  compare_pair_with_mujoco("type=\"sphere\" size=\"0.2\"", "type=\"capsule\" size=\"0.1 0.3\"",
                           1);
  compare_pair_with_mujoco("type=\"capsule\" size=\"0.1 0.3\"",
                           "type=\"capsule\" size=\"0.12 0.2\"", 2);
  compare_pair_with_mujoco("type=\"sphere\" size=\"0.2\"", "type=\"box\" size=\"0.2 0.15 0.1\"",
                           3);
  compare_pair_with_mujoco("type=\"capsule\" size=\"0.1 0.3\"",
                           "type=\"box\" size=\"0.2 0.15 0.1\"", 4);
  compare_with_mujoco("type=\"sphere\" size=\"0.3\"", 0);
  compare_with_mujoco("type=\"capsule\" size=\"0.1 0.3\"", 1);
  compare_with_mujoco("type=\"box\" size=\"0.2 0.15 0.1\"", 2);
  compare_with_mujoco("type=\"cylinder\" size=\"0.2 0.15\"", 3);
  compare_with_mujoco("type=\"cylinder\" size=\"0.05 0.4\"", 4);
}

/* a cylinder against the other shapes: MuJoCo's mjc_Convex (libccd's MPR) and ours */
static void test_cylinder_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  static const char cyl[] = "type=\"cylinder\" size=\"0.15 0.25\"";
  compare_pair_with_mujoco("type=\"sphere\" size=\"0.2\"", cyl, 5);
  compare_pair_with_mujoco("type=\"capsule\" size=\"0.1 0.3\"", cyl, 6);
  compare_pair_with_mujoco(cyl, "type=\"cylinder\" size=\"0.1 0.2\"", 7);
  compare_pair_with_mujoco(cyl, "type=\"box\" size=\"0.2 0.15 0.1\"", 8);
  /* with a margin (MuJoCo's active_adhesion inflates geoms beside cylinders): each shape
   * pushed out by half of it in MPR's support, dist = margin − depth */
  pair_margin = 0.04;
  compare_pair_with_mujoco("type=\"sphere\" size=\"0.2\"", cyl, 9);
  compare_pair_with_mujoco("type=\"capsule\" size=\"0.1 0.3\"", cyl, 10);
  compare_pair_with_mujoco(cyl, "type=\"cylinder\" size=\"0.1 0.2\"", 11);
  compare_pair_with_mujoco(cyl, "type=\"box\" size=\"0.2 0.15 0.1\"", 12);
  pair_margin = 0;
}

#else

TS_TEST(test_against_mujoco, TS_REQUIRE_MUJOCO())
TS_TEST(test_cylinder_against_mujoco, TS_REQUIRE_MUJOCO())

#endif

TS_MAIN(test_plane_sphere, test_plane_capsule, test_plane_box, test_frame_hints,
        test_cylinder_rests_on_plane, test_sphere_against_cylinder_side, test_against_mujoco,
        test_cylinder_against_mujoco, test_broad_phase_finds_every_pair, test_filter_rules)
