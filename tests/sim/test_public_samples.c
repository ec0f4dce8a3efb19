/* tests/sim/test_public_samples.c: MuJoCo's own sample files (Debian package libmujoco-samples)
 * either load, with the masses, centres of mass and inertias MuJoCo 2.2.2 gives their bodies,
 * or are refused with a message naming the element and line that is not imported.
 *
 * It prints the table docs/import.md shows (build/tests/sim/test_public_samples). Each body is
 * compared in the world at the initial pose (our frames move to the joints; MuJoCo's do not),
 * matched by name: mass, centre of mass (relative to the body's radius of gyration), principal
 * moments, each within 1e-9 relative, and the inertia matrix in world axes (relative to its
 * largest moment) within 1e-7, the rounding of MuJoCo's own principal axes (below). */
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
#include "support/mujoco.h"
#include "support/skip.h"
#include "support/tmp.h"

#define SAMPLES "/usr/share/mujoco/model/"

/* what each file gives: 1 loads, 0 refused (the refusal must name this element) */
static const struct {
  const char *file;
  int loads;
  const char *refused_for;
} samples[] = {
    {"adhesion/active_adhesion.xml", 1, NULL},
    {"composite/cloth.xml", 1, NULL},
    {"composite/grid2pin.xml", 1, NULL},
    {"composite/loop.xml", 1, NULL},
    {"composite/particle.xml", 1, NULL},
    {"composite/rope.xml", 1, NULL},
    {"composite/scene.xml", 1, NULL},
    {"composite/softbox.xml", 1, NULL},
    {"flag/flag.xml", 1, NULL},
    {"hammock/hammock.xml", 1, NULL},
    {"hammock/humanoid_body.xml", 1, NULL},
    {"humanoid/22_humanoids.xml", 1, NULL},
    {"humanoid/humanoid.xml", 1, NULL},
    {"humanoid100/humanoid100.xml", 1, NULL},
    {"humanoid100/humanoid_body.xml", 1, NULL},
    {"mug/mug.xml", 1, NULL},
    {"slider_crank/slider_crank.xml", 1, NULL},
    {"tendon_arm/arm26.xml", 1, NULL},
};
#define NSAMPLES (sizeof samples / sizeof samples[0])

#if ACHILLES_HAVE_MUJOCO
static void sort3(double v[3]) {
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 2 - i; j++) {
      if (v[j] > v[j + 1]) {
        const double t = v[j];
        v[j] = v[j + 1], v[j + 1] = t;
      }
    }
  }
}

/* the largest relative differences of our bodies against MuJoCo's; *compared: bodies matched */
static void compare_bodies(const sim_model *m, const mjModel *mm, double worst[4], int *compared) {
  sim_data *d = sim_data_new(m);
  mjData *md = mj_makeData(mm);
  sim_kinematics(m, d);
  mj_kinematics(mm, md);
  worst[0] = worst[1] = worst[2] = worst[3] = 0;
  *compared = 0;
  int unnamed = 0; /* bodies without a name in the file: the next of MuJoCo's unnamed ones */
  for (int b = 1; b < m->nbody; b++) {
    int id = mj_name2id(mm, mjOBJ_BODY, m->bodies[b].name);
    for (int k = 1, seen = 0; id <= 0 && k < mm->nbody; k++) {
      if (mm->names[mm->name_bodyadr[k]] == '\0' && seen++ == unnamed) {
        id = k;
        unnamed++;
      }
    }
    if (id <= 0) {
      continue;
    }
    (*compared)++;
    const double mass = mm->body_mass[id];
    worst[0] = fmax(worst[0], fabs(m->bodies[b].mass - mass) / mass);
    /* inertia in world axes: ours R·I·Rᵀ (body axes), MuJoCo's ximat·diag·ximatᵀ */
    double ours[9] = {0}, theirs[9] = {0}, top = 0;
    const double *R = d->xmat + 9 * b, *I = m->bodies[b].inertia, *X = md->ximat + 9 * id;
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        for (int k = 0; k < 3; k++) {
          theirs[3 * i + j] += X[3 * i + k] * mm->body_inertia[3 * id + k] * X[3 * j + k];
          for (int l = 0; l < 3; l++) {
            ours[3 * i + j] += R[3 * i + k] * I[3 * k + l] * R[3 * j + l];
          }
        }
      }
      top = fmax(top, mm->body_inertia[3 * id + i]);
    }
    /* principal moments: MuJoCo's eigen-decomposition (mju_eig3) stops at an off-diagonal of
     * 1e-12 kg·m² or a rotation below 1.4e-6 rad, which leaves its axes off by up to ~1e-8
     * relative (the matrix, worst[3]) but its moments exact to second order */
    double ev[3], vec[9], quat[4], theirs_ev[3];
    mju_eig3(ev, vec, quat, ours);
    for (int i = 0; i < 3; i++) {
      theirs_ev[i] = mm->body_inertia[3 * id + i];
    }
    sort3(ev);
    sort3(theirs_ev);
    for (int i = 0; i < 3; i++) {
      worst[2] = fmax(worst[2], fabs(ev[i] - theirs_ev[i]) / top);
    }
    for (int i = 0; i < 9; i++) {
      worst[3] = fmax(worst[3], fabs(ours[i] - theirs[i]) / top);
    }
    /* the centre of mass, relative to the body's radius of gyration */
    const double size = sqrt(top / mass);
    for (int i = 0; i < 3; i++) {
      worst[1] = fmax(worst[1], fabs(d->xipos[3 * b + i] - md->xipos[3 * id + i]) / size);
    }
  }
  sim_data_free(d);
  mj_deleteData(md);
}

/* one row of the table: the file loads with MuJoCo's bodies, or is refused naming `refused_for` */
static int nloaded, nrefused;

static void row(const char *path, const char *label, int loads, const char *refused_for) {
  char err[1024], mjerr[1024] = "";
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  mjModel *mm = mj_loadXML(path, NULL, mjerr, sizeof mjerr);
  const char *theirs = mm ? "loads" : "refuses";
  nloaded += m != NULL;
  nrefused += m == NULL;
  if (!m) {
    /* refused: the message names the element and its line */
    const char *at = strstr(err, ".xml:");
    print_message("| %s | %s | refused: `%s` | | |\n", label, theirs, at ? at + 5 : err);
    if (loads || !strstr(err, refused_for) || !at) {
      fail_msg("%s: %s (expected %s)", label, err, loads ? "a model" : refused_for);
    }
  } else {
    double worst[4] = {0, 0, 0, 0};
    int compared = 0;
    if (mm) {
      compare_bodies(m, mm, worst, &compared);
    }
    print_message("| %s | %s | loads: %d bodies, %d dofs | %d of %d | %.1e, %.1e, %.1e "
                  "(%.1e) |\n", label, theirs, m->nbody - 1, m->nv, compared,
                  mm ? mm->nbody - 1 : 0, worst[0], worst[1], worst[2], worst[3]);
    if (!loads) {
      fail_msg("%s loads, expected a refusal naming %s", label, refused_for);
    }
    /* every body of ours is one of MuJoCo's (bodies merged into their parent are not) */
    if (mm && (compared != m->nbody - 1 || worst[0] > 1e-9 || worst[1] > 1e-9 ||
               worst[2] > 1e-9 || worst[3] > 1e-7)) {
      fail_msg("%s: bodies differ from MuJoCo's (%d of %d matched)", label, compared,
               m->nbody - 1);
    }
  }
  sim_model_free(m);
  mj_deleteModel(mm);
}

static void test_samples(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  TS_REQUIRE_FILE("libmujoco-samples", SAMPLES "humanoid/humanoid.xml");
  print_message("| file | MuJoCo 2.2.2 | Achilles | bodies compared | mass, centre of mass, "
                "principal moments (inertia matrix): largest relative difference |\n");
  print_message("|---|---|---|---|---|\n");
  for (size_t s = 0; s < NSAMPLES; s++) {
    char path[512];
    snprintf(path, sizeof path, SAMPLES "%s", samples[s].file);
    row(path, samples[s].file, samples[s].loads, samples[s].refused_for);
  }
  print_message("\n%d of the %d files load, %d are refused\n", nloaded, (int)NSAMPLES, nrefused);
  /* the mug again with <compiler exactmeshinertia="true"> (the mesh's own volume, signed
   * pyramids: its mass is half the default's), from a copy beside links to its mesh and
   * texture */
  char dir[128], path[256], target[256];
  ts_tmpdir(dir, sizeof dir, "samples");
  static const char *const beside[] = {"mug.obj", "mug.png"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, beside[i]);
    snprintf(target, sizeof target, SAMPLES "mug/%s", beside[i]);
    assert_int_equal(symlink(target, path), 0);
  }
  char *text = ts_read_file(SAMPLES "mug/mug.xml", NULL);
  assert_non_null(text);
  char *at = strstr(text, "<mujoco model=\"mug\">");
  assert_non_null(at);
  at += strlen("<mujoco model=\"mug\">");
  static char exact[1 << 14];
  snprintf(exact, sizeof exact, "%.*s<compiler exactmeshinertia=\"true\"/>%s", (int)(at - text),
           text, at);
  free(text);
  snprintf(path, sizeof path, "%s/mug_exact.xml", dir);
  ts_write_file(path, exact);
  row(path, "mug/mug.xml, exactmeshinertia=\"true\"", 1, NULL);
  ts_rmtree(dir);
}
#endif

TS_MUJOCO_MAIN(test_samples)
