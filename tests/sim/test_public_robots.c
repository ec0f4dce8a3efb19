/* tests/sim/test_public_robots.c: robot descriptions that users already have load, and their
 * dynamics are MuJoCo's.
 *
 * The files are public ones that Debian ships (installed by tools/scripts/bootstrap.sh): DART's
 * data (package dart-doc) holds the URDF of the Barrett WAM (a 7-DoF research arm), the KUKA KR5
 * sixx R650 (a 6-DoF arm) and Boston Dynamics' Atlas v3 (a 27-joint humanoid). Each is imported
 * from the file as shipped; MuJoCo 2.2.2 loads the same file (a copy without its visual and
 * collision elements, whose meshes MuJoCo would look for beside the file: neither engine takes
 * inertia from them) and both compute the joint-space mass matrix and bias forces at 20 random
 * states, joints matched by name; and MuJoCo's own humanoid.xml (libmujoco-samples). Also MuJoCo's
 * reading of a solref or solimp given in part. The KR5's and the WAM's STL collision meshes
 * convert; the KR5's touch where MuJoCo's do at random joint states. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

#define DART_DATA "/usr/share/doc/dart/data/"

/* The WAM's URDF names its collision meshes package://herb_description/meshes/wam/…: found as
 * meshes/wam/… beside the file, all 8 convert */
static void test_wam_meshes_convert(void **state) {
  (void)state;
  TS_REQUIRE_FILE("dart-doc", DART_DATA "urdf/wam/wam.urdf");
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(DART_DATA "urdf/wam/wam.urdf", &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  int nmesh = 0, nvert = 0;
  for (int g = 0; g < m->ngeom; g++) {
    nmesh += m->geoms[g].type == SIM_GEOM_MESH;
    nvert += m->geoms[g].hull_nvert;
  }
  print_message("WAM: %d mesh collisions converted, %d hull vertices in all\n", nmesh, nvert);
  assert_int_equal(nmesh, 8);
  sim_model_free(m);
}

/* Every robot URDF dart-doc ships loads without refusal (with its meshes where it names STL
 * ones); atlas_v3.urdf names a link "head" the file lacks, which MuJoCo refuses too, and DART's
 * own test inputs (urdf/test/: invalid on purpose, or without masses) are not robots. */
static void test_dart_urdfs_load(void **state) {
  (void)state;
  TS_REQUIRE_FILE("dart-doc", DART_DATA "urdf/wam/wam.urdf");
  static const char *const robots[] = {
      "urdf/wam/wam.urdf",          "urdf/KR5/KR5 sixx R650.urdf", "urdf/KR5/ground.urdf",
      "urdf/drchubo/drchubo.urdf",  "sdf/atlas/atlas_v3_no_head.urdf", "sdf/atlas/ground.urdf",
      "urdf/test/issue838.urdf",
  };
  for (size_t i = 0; i < sizeof robots / sizeof robots[0]; i++) {
    char path[512], err[1024];
    snprintf(path, sizeof path, DART_DATA "%s", robots[i]);
    sim_import_options o = {0, NULL, NULL};
    sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
    if (!m) {
      fail_msg("%s: %s", robots[i], err);
    }
    print_message("%s: %d bodies, %d dofs, %d collision geoms\n", robots[i], m->nbody - 1, m->nv,
                  m->ngeom);
    sim_model_free(m);
  }
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  assert_null(sim_import_load_file(DART_DATA "sdf/atlas/atlas_v3.urdf", &o, err, sizeof err));
  assert_non_null(strstr(err, "atlas_v3.urdf:715: <joint name=\"neck_ry\">: child link \"head\""));
}

#if ACHILLES_HAVE_MUJOCO

static char *read_text(const char *path) {
  char *s = ts_read_file(path, NULL);
  if (!s) {
    fail_msg("%s is missing: tools/scripts/bootstrap.sh deps installs it (Debian package dart-doc)",
             path);
  }
  return s;
}

/* removes every <tag ...>...</tag> and <tag .../> element from s, in place */
static void strip_elements(char *s, const char *tag) {
  char open[32], close[32];
  snprintf(open, sizeof open, "<%s", tag);
  snprintf(close, sizeof close, "</%s>", tag);
  for (char *p = strstr(s, open); p; p = strstr(p, open)) {
    const char c = p[strlen(open)];
    if (c != ' ' && c != '>' && c != '\n' && c != '\t' && c != '/') {
      p++;
      continue;
    }
    char *gt = strchr(p, '>');
    assert_non_null(gt);
    char *end = gt[-1] == '/' ? gt + 1 : strstr(p, close);
    assert_non_null(end);
    end = gt[-1] == '/' ? end : end + strlen(close);
    memmove(p, end, strlen(end) + 1);
  }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(double lo, double hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct robot {
  const char *file;
  int njoints; /* moving joints the file declares */
} robot;

static void compare_with_mujoco(const robot *rb) {
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE(strstr(rb->file, "/mujoco/") ? "libmujoco-samples" : "dart-doc", rb->file);
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(rb->file, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  char copy[128];
  snprintf(copy, sizeof copy, "%s", rb->file);
  if (strstr(rb->file, ".urdf")) {
    char *text = read_text(rb->file);
    strip_elements(text, "visual");
    strip_elements(text, "collision");
    ts_tmp_path(copy, sizeof copy, "robot.urdf");
    ts_write_file(copy, text);
    free(text);
  }
  mjModel *mm = ts_mj_load(copy);
  assert_int_equal(m->nv, rb->njoints);
  assert_int_equal(mm->nv, m->nv);
  /* our dof k is MuJoCo's dof vmap[k]: joints matched by name */
  int *vmap = malloc((size_t)m->nv * sizeof(int));
  assert_non_null(vmap);
  ts_mj_maps(m, mm, NULL, vmap);
  mm->opt.gravity[2] = m->opt.gravity[2]; /* both the file's (URDF has none): same field */
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  double *M = malloc((size_t)(m->nv * m->nv) * sizeof(double));
  assert_true(d && md && M);
  double eM = 0, eb = 0;
  for (int s = 0; s < 20; s++) {
    for (int j = 0; j < m->njnt; j++) {
      const sim_joint *jt = &m->joints[j];
      if (jt->dofadr < 0) {
        continue;
      }
      const int mj = mj_name2id(mm, mjOBJ_JOINT, jt->name);
      const int nq = sim_joint_nq(jt->type), nv = sim_joint_nv(jt->type);
      double q[7], norm = 0;
      for (int k = 0; k < nq; k++) {
        q[k] = uniform(-1.5, 1.5);
      }
      for (int k = nq - 4; nq > nv && k < nq; k++) { /* a ball's or free joint's quaternion */
        norm += q[k] * q[k];
      }
      for (int k = nq - 4; nq > nv && k < nq; k++) {
        q[k] /= sqrt(norm);
      }
      for (int k = 0; k < nq; k++) {
        d->qpos[jt->qposadr + k] = md->qpos[mm->jnt_qposadr[mj] + k] = q[k];
      }
      for (int k = 0; k < nv; k++) {
        d->qvel[jt->dofadr + k] = md->qvel[mm->jnt_dofadr[mj] + k] = uniform(-2, 2);
      }
    }
    sim_forward(m, d);
    sim_crba(m, d);
    sim_rnea_bias(m, d);
    mj_forward(mm, md);
    mj_fullM(mm, M, md->qM);
    double dM = 0, sM = 0, db = 0, sb = 1e-3;
    for (int i = 0; i < m->nv; i++) {
      for (int k = 0; k < m->nv; k++) {
        const double ref = M[vmap[i] * m->nv + vmap[k]];
        dM = fmax(dM, fabs(d->qM[i * m->nv + k] - ref));
        sM = fmax(sM, fabs(ref));
      }
      db = fmax(db, fabs(d->qfrc_bias[i] - md->qfrc_bias[vmap[i]]));
      sb = fmax(sb, fabs(md->qfrc_bias[vmap[i]]));
    }
    eM = fmax(eM, dM / sM);
    eb = fmax(eb, db / sb);
  }
  print_message("%s: %d joints, %d bodies here (%d in MuJoCo, which fuses fixed links); "
                "20 states, max relative error qM %.2g, qfrc_bias %.2g\n",
                rb->file, m->nv, m->nbody, mm->nbody, eM, eb);
  /* MuJoCo turns a full URDF inertia into principal moments and axes inexactly (ENVIRONMENT
   * notes: up to ~5e-10 kg·m², relatively more on the KR5's light links: 8e-8 here); a wrong
   * frame, axis or inertia is off by orders of magnitude more */
  assert_true(eM < 1e-6);
  assert_true(eb < 1e-6);
  free(M);
  free(vmap);
  ts_mj_free(mm, md);
  ts_sim_free(m, d);
}

TS_TEST(test_wam_7dof_arm, compare_with_mujoco(&(const robot){DART_DATA "urdf/wam/wam.urdf", 7}))

TS_TEST(test_kr5_6dof_arm,
        compare_with_mujoco(&(const robot){DART_DATA "urdf/KR5/KR5 sixx R650.urdf", 6}))

TS_TEST(test_atlas_humanoid,
        compare_with_mujoco(&(const robot){DART_DATA "sdf/atlas/atlas_v3_no_head.urdf", 27}))

/* MuJoCo's own humanoid (libmujoco-samples): a free root, bodies of two and three hinges, the
 * ankles' at different anchors, default classes, degrees */
TS_TEST(test_mujoco_humanoid,
        compare_with_mujoco(
            &(const robot){"/usr/share/mujoco/model/humanoid/humanoid.xml", 6 + 21}))

typedef struct body_pair {
  char a[64], b[64];
  double dist; /* the deepest contact of the pair */
  int n;
} body_pair;

static int cmp_body_pair(const void *x, const void *y) {
  const body_pair *p = x, *q = y;
  const int c = strcmp(p->a, q->a);
  return c ? c : strcmp(p->b, q->b);
}

/* the body pairs in contact, each pair's names in order, sorted; returns their number */
static int pairs_of(body_pair *out, int max, int ncon, const char *(*name)(const void *, int, int),
                    const void *ctx, const double *dist) {
  int n = 0;
  for (int c = 0; c < ncon; c++) {
    const char *x = name(ctx, c, 0), *y = name(ctx, c, 1);
    body_pair p;
    const int swap = strcmp(x, y) > 0;
    snprintf(p.a, sizeof p.a, "%s", swap ? y : x);
    snprintf(p.b, sizeof p.b, "%s", swap ? x : y);
    p.dist = dist[c];
    p.n = 1;
    int k = 0;
    while (k < n && cmp_body_pair(&out[k], &p) != 0) {
      k++;
    }
    if (k < n) {
      out[k].dist = fmin(out[k].dist, p.dist);
      out[k].n++;
    } else if (n < max) {
      out[n++] = p;
    }
  }
  qsort(out, (size_t)n, sizeof *out, cmp_body_pair);
  return n;
}

static const char *our_body(const void *ctx, int c, int side) {
  const sim_model *m = ((const void *const *)ctx)[0];
  const sim_data *d = ((const void *const *)ctx)[1];
  const int b = m->bodies[m->geoms[d->con_geom[2 * c + side]].body].weld; /* MuJoCo fuses welds */
  return b == 0 ? "world" : m->bodies[b].name;
}

static const char *mujoco_body(const void *ctx, int c, int side) {
  const mjModel *mm = ((const void *const *)ctx)[0];
  const mjData *md = ((const void *const *)ctx)[1];
  const int g = side ? md->contact[c].geom2 : md->contact[c].geom1;
  const int b = mm->geom_bodyid[g];
  return b == 0 ? "world" : mj_id2name(mm, mjOBJ_BODY, b);
}

/* The KR5's URDF with its STL collision meshes: every one converts (its hull's vertex count
 * printed), and at random joint states the links that touch each other are the ones MuJoCo
 * finds touching, loading the same file with the same meshes (told where they are through the
 * URDF's <mujoco><compiler meshdir> extension). */
static void test_kr5_mesh_contacts(void **state) {
  (void)state;
  const char *file = DART_DATA "urdf/KR5/KR5 sixx R650.urdf";
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("dart-doc", file);
  char err[1024], copy[128];
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(file, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  int nmesh = 0;
  char counts[256] = "";
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geoms[g].type == SIM_GEOM_MESH) {
      nmesh++;
      snprintf(counts + strlen(counts), sizeof counts - strlen(counts), " %s %d",
               m->geoms[g].body ? m->bodies[m->geoms[g].body].name : "world",
               m->geoms[g].hull_nvert);
    }
  }
  print_message("KR5: %d mesh collisions converted; hull vertices:%s\n", nmesh, counts);
  assert_int_equal(nmesh, 7);
  assert_int_equal(m->ngeom, 7);
  char *text = read_text(file);
  strip_elements(text, "visual");
  char *top = strstr(text, "<robot");
  assert_non_null(top);
  char *gt = strchr(top, '>') + 1;
  ts_tmp_path(copy, sizeof copy, "kr5.urdf");
  FILE *f = fopen(copy, "w");
  assert_non_null(f);
  fprintf(f, "%.*s<mujoco><compiler meshdir=\"" DART_DATA "urdf/KR5/meshes/\" "
          "discardvisual=\"false\"/></mujoco>%s", (int)(gt - text), text, gt);
  fclose(f);
  free(text);
  mjModel *mm = ts_mj_load(copy);
  mjData *md = mj_makeData(mm);
  sim_data *d = sim_data_new(m);
  int agree = 0, ncon = 0, npairs = 0, states = 200, close = 0;
  double worst = 0, worst_close = 0;
  for (int s = 0; s < states; s++) {
    for (int j = 0; j < m->njnt; j++) {
      if (m->joints[j].qposadr < 0) {
        continue;
      }
      const int mj = mj_name2id(mm, mjOBJ_JOINT, m->joints[j].name);
      d->qpos[m->joints[j].qposadr] = md->qpos[mm->jnt_qposadr[mj]] = uniform(-2.5, 2.5);
    }
    sim_kinematics(m, d);
    sim_collide(m, d);
    mj_forward(mm, md);
    body_pair ours[64], theirs[64];
    const void *cm[2] = {m, d}, *cmj[2] = {mm, md};
    double mdist[256];
    for (int c = 0; c < md->ncon && c < 256; c++) {
      mdist[c] = md->contact[c].dist;
    }
    const int n = pairs_of(ours, 64, d->ncon, our_body, cm, d->con_dist);
    const int k = pairs_of(theirs, 64, md->ncon, mujoco_body, cmj, mdist);
    int same = n == k;
    for (int i = 0; same && i < n; i++) {
      same = cmp_body_pair(&ours[i], &theirs[i]) == 0;
      const double e = same ? fabs(ours[i].dist - theirs[i].dist) : 0;
      worst = fmax(worst, e);
      close += same && e <= 1e-6;
      worst_close = e <= 1e-6 ? fmax(worst_close, e) : worst_close;
    }
    agree += same;
    ncon += d->ncon;
    npairs += n;
  }
  print_message("KR5 self-contacts at %d random states: %d contacts, %d touching link pairs; "
                "the same pairs as MuJoCo in %d states; deepest distance within 1e-6 m of "
                "MuJoCo's for %d pairs (largest %.2g m), up to %.2g m for the rest (MPR's other "
                "path where faces meet flat, test_mesh.c)\n",
                states, ncon, npairs, agree, close, worst_close, worst);
  assert_true(npairs > 50);
  assert_true(agree >= states * 95 / 100);
  assert_true(close >= npairs * 85 / 100);
  assert_true(worst <= 0.02);
  sim_data_free(d);
  ts_mj_free(mm, md);
  sim_model_free(m);
}

/* MuJoCo reads a solref or solimp given in part (as its own humanoid.xml writes
 * solimplimit="0 .99 .01") and keeps its defaults for the rest */
static void test_partial_soft_parameters(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  static const char xml[] =
      "<mujoco><worldbody><body name='b'>"
      "<joint name='j' type='hinge' axis='0 1 0' limited='true' range='-1 1'"
      " solimplimit='0 .99 .01' solreflimit='0.05' solimpfriction='0.8' frictionloss='0.1'/>"
      "<geom name='g' type='sphere' size='0.1' mass='1' solimp='0.7 0.8' solref='0.03'/>"
      "</body></worldbody></mujoco>";
  char path[128], err[1024];
  ts_tmp_path(path, sizeof path, "partial.xml");
  ts_write_file(path, xml);
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = ts_mj_load(path);
  const sim_joint *j = &m->joints[0];
  for (int k = 0; k < 5; k++) {
    assert_true(j->solimp_limit[k] == mm->jnt_solimp[k]);
    assert_true(j->solimp_friction[k] == mm->dof_solimp[k]);
    assert_true(m->geoms[0].solimp[k] == mm->geom_solimp[k]);
  }
  for (int k = 0; k < 2; k++) {
    assert_true(j->solref_limit[k] == mm->jnt_solref[k]);
    assert_true(m->geoms[0].solref[k] == mm->geom_solref[k]);
  }
  mj_deleteModel(mm);
  sim_model_free(m);
}

#endif

#if ACHILLES_HAVE_MUJOCO
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_wam_7dof_arm, test_kr5_6dof_arm,
        test_kr5_mesh_contacts, test_wam_meshes_convert, test_atlas_humanoid, test_mujoco_humanoid,
        test_partial_soft_parameters, test_dart_urdfs_load)
#else
TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_wam_meshes_convert, test_dart_urdfs_load,
             ts_mujoco_missing)
#endif
