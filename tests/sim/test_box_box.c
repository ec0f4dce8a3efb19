/* tests/sim/test_box_box.c: box against box (sim/collision_box.c).
 *
 * Closed forms first (a cube resting flat on a cube: four corners at the overlap; a cube on
 * its edge across another's edge: one contact at the crossing), then MuJoCo 2.2.2's own
 * collision function (mjCOLLISIONFUNC[box][box], its mjc_BoxBox) at random poses of every
 * kind (face on face nearly aligned, tilted, edge across edge, apart): the same contacts in the
 * same order, positions, normals and distances within 1e-9. */
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
#include "support/skip.h"

#define PI 3.14159265358979323846

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* rotation of angle a about unit axis u (Rodrigues), row-major */
static void rotation(double R[9], const double u[3], double a) {
  const double c = cos(a), s = sin(a), t = 1 - c;
  const double r[9] = {t * u[0] * u[0] + c,        t * u[0] * u[1] - s * u[2], t * u[0] * u[2] + s * u[1],
                       t * u[0] * u[1] + s * u[2], t * u[1] * u[1] + c,        t * u[1] * u[2] - s * u[0],
                       t * u[0] * u[2] - s * u[1], t * u[1] * u[2] + s * u[0], t * u[2] * u[2] + c};
  memcpy(R, r, sizeof r);
}

/* A cube of half-size 0.1 resting 0.004 into a larger block, shifted so that it overhangs one
 * side: the contacts are the four corners of the overlap rectangle, normal +z (block → cube),
 * halfway into the overlap, and MuJoCo 2.2.2 reports half the depth as the distance. */
static void test_face_on_face(void **state) {
  (void)state;
  const double s1[3] = {0.3, 0.2, 0.05}, s2[3] = {0.1, 0.1, 0.1};
  const double p1[3] = {0, 0, 0}, p2[3] = {0.25, 0.02, 0.05 + 0.1 - 0.004};
  sim_contact con[SIM_COLLIDE_MAX];
  const int n = sim_collide_box_box(con, 0, p1, identity, s1, p2, identity, s2);
  assert_int_equal(n, 4);
  /* the overlap: x in [0.15, 0.3], y in [-0.08, 0.12] */
  int seen = 0;
  for (int i = 0; i < n; i++) {
    assert_true(fabs(con[i].frame[2] - 1) < 1e-15);
    assert_true(fabs(con[i].dist + 0.002) < 1e-12);
    assert_true(fabs(con[i].pos[2] - (0.05 - 0.002)) < 1e-12);
    const int ix = fabs(con[i].pos[0] - 0.15) < 1e-12 ? 0 : fabs(con[i].pos[0] - 0.3) < 1e-12 ? 1 : -9;
    const int iy = fabs(con[i].pos[1] + 0.08) < 1e-12 ? 0 : fabs(con[i].pos[1] - 0.12) < 1e-12 ? 1 : -9;
    assert_true(ix >= 0 && iy >= 0);
    seen |= 1 << (2 * ix + iy);
  }
  assert_int_equal(seen, 15);
  /* lifted 0.005 above: apart */
  const double up[3] = {p2[0], p2[1], 0.05 + 0.1 + 0.001};
  assert_int_equal(sim_collide_box_box(con, 0, p1, identity, s1, up, identity, s2), 0);
}

/* Two cubes of half-size 0.1, the second turned 45° about y so that its bottom is an edge along
 * y, lowered 0.003 into the first's top face: the edge clipped by the face gives its two ends
 * (the lower end twice, as a corner and as a crossing; the contact stage keeps one), half the
 * depth as the distance. */
static void test_edge_on_face(void **state) {
  (void)state;
  const double s[3] = {0.1, 0.1, 0.1}, y[3] = {0, 1, 0};
  double R[9];
  rotation(R, y, PI / 4);
  const double p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0.1 + 0.1 * sqrt(2.0) - 0.003};
  sim_contact con[SIM_COLLIDE_MAX];
  const int n = sim_collide_box_box(con, 0, p1, identity, s, p2, R, s);
  assert_int_equal(n, 3);
  int ends = 0;
  for (int i = 0; i < n; i++) {
    assert_true(fabs(con[i].frame[2] - 1) < 1e-12);
    assert_true(fabs(fabs(con[i].pos[1]) - 0.1) < 1e-12);
    assert_true(fabs(con[i].pos[0]) < 1e-12);
    assert_true(fabs(con[i].pos[2] - (0.1 - 0.0015)) < 1e-12);
    assert_true(fabs(con[i].dist + 0.0015) < 1e-12);
    ends |= con[i].pos[1] > 0 ? 2 : 1;
  }
  assert_int_equal(ends, 3);
}

/* The same pose through the contact stage (sim_collide): the repeated corner is kept once, as
 * MuJoCo's driver keeps it, so the edge rests on its two ends. */
static void test_repeats_dropped(void **state) {
  (void)state;
  char json[1024];
  snprintf(json, sizeof json,
           "{ \"bodies\": [ { \"name\": \"cube\", \"parent\": \"world\", \"pos\": [0, 0, %.17g],\n"
           "    \"quat\": [%.17g, 0, %.17g, 0], \"joint\": { \"name\": \"f\", \"type\": \"free\" },\n"
           "    \"inertial\": { \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } } ],\n"
           "  \"geoms\": [ { \"name\": \"block\", \"body\": \"world\", \"type\": \"box\",\n"
           "    \"size\": [0.1, 0.1, 0.1] },\n"
           "    { \"name\": \"cube\", \"body\": \"cube\", \"type\": \"box\", \"size\": [0.1, 0.1, 0.1] } ] }",
           0.1 + 0.1 * sqrt(2.0) - 0.003, cos(PI / 8), sin(PI / 8));
  sim_model *m = ts_model(json);
  sim_data *d = sim_data_new(m);
  sim_kinematics(m, d);
  sim_collide(m, d);
  assert_int_equal(d->ncon, 2);
  assert_true(fabs(d->con_pos[1] + d->con_pos[4]) < 1e-12); /* at y = −0.1 and +0.1 */
  ts_sim_free(m, d);
}

#if ACHILLES_HAVE_MUJOCO

/* two free boxes of different sizes, posed at random by the comparison */
static const char two_boxes_xml[] =
    "<mujoco><worldbody>"
    "<body><freejoint/><geom type=\"box\" size=\"0.2 0.15 0.1\"/></body>"
    "<body><freejoint/><geom type=\"box\" size=\"0.12 0.25 0.07\"/></body>"
    "</worldbody></mujoco>";

static double rnd(uint64_t *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  uint64_t r = *s * 2685821657736338717ull;
  return lo + (hi - lo) * (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

static void random_rotation(double R[9], uint64_t *s, double max_angle) {
  double u[3] = {rnd(s, -1, 1), rnd(s, -1, 1), rnd(s, -1, 1)};
  const double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int k = 0; k < 3; k++) {
    u[k] /= n;
  }
  rotation(R, u, rnd(s, -max_angle, max_angle));
}

static void mul33(double out[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
}

/* counts of what the poses exercised */
typedef struct tally {
  int poses, touching, contacts, many; /* many: poses with 3 or more contacts (face on face) */
  int edges;                           /* poses whose normal is no face normal: edge across edge */
  double error;
} tally;

/* one pose of both boxes through both functions (margin as given) */
static void compare_pose(tally *t, const mjModel *mm, mjData *md, const double p1[3],
                         const double R1[9], const double p2[3], const double R2[9], double margin) {
  memcpy(md->geom_xpos, p1, 3 * sizeof(double));
  memcpy(md->geom_xmat, R1, 9 * sizeof(double));
  memcpy(md->geom_xpos + 3, p2, 3 * sizeof(double));
  memcpy(md->geom_xmat + 9, R2, 9 * sizeof(double));
  mjContact theirs[mjMAXCONPAIR];
  memset(theirs, 0, sizeof theirs);
  const int nm = mjCOLLISIONFUNC[mjGEOM_BOX][mjGEOM_BOX](mm, md, theirs, 0, 1, margin);
  sim_contact ours[SIM_COLLIDE_MAX];
  const int n = sim_collide_box_box(ours, margin, p1, R1, mm->geom_size, p2, R2, mm->geom_size + 3);
  if (n != nm) {
    for (int c = 0; c < n || c < nm; c++) {
      if (c < n) {
        print_message("ours %d: pos %.9f %.9f %.9f dist %.9f\n", c, ours[c].pos[0], ours[c].pos[1],
                      ours[c].pos[2], ours[c].dist);
      }
      if (c < nm) {
        print_message("MuJoCo %d: pos %.9f %.9f %.9f dist %.9f\n", c, theirs[c].pos[0],
                      theirs[c].pos[1], theirs[c].pos[2], theirs[c].dist);
      }
    }
    fail_msg("pose %d: %d contacts, MuJoCo %d", t->poses, n, nm);
  }
  t->poses++;
  t->touching += n > 0;
  t->contacts += n;
  t->many += n >= 3;
  if (n > 0) {
    double along = 0; /* the normal's best alignment with a face normal of either box */
    for (int k = 0; k < 3; k++) {
      along = fmax(along, fabs(R1[k] * ours[0].frame[0] + R1[3 + k] * ours[0].frame[1] + R1[6 + k] * ours[0].frame[2]));
      along = fmax(along, fabs(R2[k] * ours[0].frame[0] + R2[3 + k] * ours[0].frame[1] + R2[6 + k] * ours[0].frame[2]));
    }
    t->edges += along < 1 - 1e-9;
  }
  for (int c = 0; c < n; c++) {
    t->error = fmax(t->error, fabs(ours[c].dist - theirs[c].dist));
    for (int k = 0; k < 3; k++) {
      t->error = fmax(t->error, fabs(ours[c].pos[k] - theirs[c].pos[k]));
      t->error = fmax(t->error, fabs(ours[c].frame[k] - theirs[c].frame[k]));
    }
  }
}

static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  mjModel *mm = ts_mj_load_xml(two_boxes_xml);
  mjData *md = mj_makeData(mm);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  tally t = {0};
  const double *s1 = mm->geom_size, *s2 = mm->geom_size + 3;
  for (int k = 0; k < 1200; k++) {
    double R1[9], R2[9], turn[9], p1[3], p2[3];
    random_rotation(R1, &s, PI);
    for (int i = 0; i < 3; i++) {
      p1[i] = rnd(&s, -0.5, 0.5);
    }
    const int kind = k % 4;
    if (kind < 2) { /* box 2 on a face of box 1: aligned up to a small (kind 0) or larger tilt */
      const int axis = (int)rnd(&s, 0, 3) % 3, side = rnd(&s, 0, 1) < 0.5 ? -1 : 1;
      random_rotation(turn, &s, kind == 0 ? 0.02 : 0.4);
      mul33(R2, R1, turn);
      double local[3] = {rnd(&s, -s1[0], s1[0]), rnd(&s, -s1[1], s1[1]), rnd(&s, -s1[2], s1[2])};
      local[axis] = side * (s1[axis] + s2[axis] + rnd(&s, -0.02, 0.005));
      for (int i = 0; i < 3; i++) {
        p2[i] = p1[i] + R1[3 * i] * local[0] + R1[3 * i + 1] * local[1] + R1[3 * i + 2] * local[2];
      }
    } else { /* anywhere near: edges, corners and faces at any attitude, some apart */
      random_rotation(R2, &s, PI);
      for (int i = 0; i < 3; i++) {
        p2[i] = p1[i] + rnd(&s, -0.45, 0.45);
      }
    }
    compare_pose(&t, mm, md, p1, R1, p2, R2, 0);
    if (k % 10 == 0) { /* a margin takes the near-miss branches */
      compare_pose(&t, mm, md, p1, R1, p2, R2, 0.01);
    }
  }
  print_message("box–box: %d poses, %d touching (%d edge across edge), %d contacts (%d poses with 3 "
                "or more); max difference from MuJoCo's mjc_BoxBox %.2g\n",
                t.poses, t.touching, t.edges, t.contacts, t.many, t.error);
  assert_true(t.touching >= 400);
  assert_true(t.many >= 100 && t.edges >= 50);
  assert_true(t.error <= 1e-9);
  ts_mj_free(mm, md);
}

#else

TS_TEST(test_against_mujoco, TS_REQUIRE_MUJOCO())

#endif

TS_MAIN(test_face_on_face, test_edge_on_face, test_repeats_dropped, test_against_mujoco)
