/* tests/sim/test_muscle.c: muscles against MuJoCo 2.2.2 on its own sample arm26.xml (a 2-link arm
 * moved by six muscles along spatial tendons wrapping two cylinders; libmujoco-samples), loaded
 * by our importer and by MuJoCo from the same file:
 *  - the length ranges our loader finds by simulation, beside MuJoCo's compiler's (printed);
 *  - per state: tendon lengths and moment arms, actuator forces, qfrc_actuator, q̈ and the
 *    activations' rates, along MuJoCo's trajectory under random muscle commands;
 *  - a 2 s trajectory side by side from the same start and commands (Euler, the file's, and
 *    RK4), activations included.
 * The figures are printed (ctest -V -R test_muscle). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/mujoco.h"
#include "support/tmp.h"

#define ARM26 "/usr/share/mujoco/model/tendon_arm/arm26.xml"

#if ACHILLES_HAVE_MUJOCO
typedef struct arm {
  sim_model *m;
  sim_data *d;
  mjModel *mm;
  mjData *md;
  int qmap[4], vmap[4], umap[8], tmap[8];
} arm;

static void open_arm(arm *a) {
  TS_REQUIRE_FILE("libmujoco-samples", ARM26);
  char err[1024];
  sim_import_options o = {0, NULL, NULL};
  a->m = sim_import_load_file(ARM26, &o, err, sizeof err);
  if (!a->m) {
    fail_msg("%s", err);
  }
  a->d = sim_data_new(a->m);
  a->mm = ts_mj_load(ARM26);
  a->md = ts_mj_data(a->mm);
  assert_int_equal(a->m->nv, 2);
  assert_int_equal(a->m->nu, 6);
  assert_int_equal(a->m->ntendon, 6);
  ts_mj_maps(a->m, a->mm, a->qmap, a->vmap);
  for (int i = 0; i < a->m->nu; i++) {
    a->umap[i] = mj_name2id(a->mm, mjOBJ_ACTUATOR, a->m->actuators[i].name);
    a->tmap[i] = mj_name2id(a->mm, mjOBJ_TENDON, a->m->tendons[i].name);
    assert_true(a->umap[i] >= 0 && a->tmap[i] >= 0);
  }
}

static void close_arm(arm *a) {
  sim_data_free(a->d);
  sim_model_free(a->m);
  ts_mj_free(a->mm, a->md);
}

static double uniform(unsigned long long *s, double lo, double hi) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* new random commands in [0, 1] for every muscle, the same on both sides */
static void commands(arm *a, unsigned long long *seed) {
  for (int i = 0; i < a->m->nu; i++) {
    const double u = uniform(seed, -0.2, 1.2); /* beyond [0, 1] too: clamped by both */
    a->d->ctrl[i] = u;
    a->md->ctrl[a->umap[i]] = u;
  }
}

static void test_lengthrange(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  arm a;
  open_arm(&a);
  double worst = 0, acc0 = 0;
  print_message("| muscle | lengthrange (ours), m | MuJoCo's | difference | acc0 difference |\n");
  for (int i = 0; i < a.m->nu; i++) {
    const sim_actuator *u = &a.m->actuators[i];
    const double *theirs = a.mm->actuator_lengthrange + 2 * a.umap[i];
    const double dif = fmax(fabs(u->lengthrange[0] - theirs[0]), fabs(u->lengthrange[1] - theirs[1]));
    const double dacc = fabs(u->acc0 - a.mm->actuator_acc0[a.umap[i]]) / a.mm->actuator_acc0[a.umap[i]];
    print_message("| %s | %.9f %.9f | %.9f %.9f | %.1e | %.1e |\n", u->name, u->lengthrange[0],
                  u->lengthrange[1], theirs[0], theirs[1], dif, dacc);
    worst = fmax(worst, dif);
    acc0 = fmax(acc0, dacc);
  }
  print_message("length ranges: largest difference %.1e m; acc0: %.1e relative\n", worst, acc0);
  assert_true(worst <= 1e-9);
  assert_true(acc0 <= 1e-12);
  close_arm(&a);
}

/* MuJoCo's state (qpos, qvel, act, ctrl, warm start) into ours */
static void copy_state(arm *a) {
  for (int k = 0; k < a->m->nq; k++) {
    a->d->qpos[k] = a->md->qpos[a->qmap[k]];
  }
  for (int k = 0; k < a->m->nv; k++) {
    a->d->qvel[k] = a->md->qvel[a->vmap[k]];
    a->d->qacc_warmstart[k] = a->md->qacc_warmstart[a->vmap[k]];
  }
  for (int i = 0; i < a->m->nu; i++) {
    a->d->act[a->m->actuators[i].actadr] = a->md->act[a->umap[i]];
  }
  a->d->time = a->md->time;
}

static void test_states(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  arm a;
  open_arm(&a);
  unsigned long long seed = 26;
  double len = 0, mom = 0, force = 0, qfrc = 0, qacc = 0, actdot = 0, fmax_seen = 0;
  int states = 0, limited = 0;
  for (int step = 0; step < 2000; step++) { /* 10 s at the file's 5 ms */
    if (step % 40 == 0) {
      commands(&a, &seed);
    }
    if (step % 5 == 0) {
      copy_state(&a);
      mj_forward(a.mm, a.md);
      sim_forward(a.m, a.d);
      for (int t = 0; t < a.m->ntendon; t++) {
        len = fmax(len, fabs(a.d->ten_length[t] - a.md->ten_length[a.tmap[t]]));
        for (int k = 0; k < a.m->nv; k++) {
          mom = fmax(mom, fabs(a.d->ten_J[t * a.m->nv + k] -
                               a.md->ten_J[a.tmap[t] * a.mm->nv + a.vmap[k]]));
        }
      }
      double scale = 1;
      for (int k = 0; k < a.m->nv; k++) {
        scale = fmax(scale, fabs(a.md->qacc[a.vmap[k]]));
        qfrc = fmax(qfrc, fabs(a.d->qfrc_actuator[k] - a.md->qfrc_actuator[a.vmap[k]]));
      }
      for (int k = 0; k < a.m->nv; k++) {
        qacc = fmax(qacc, fabs(a.d->qacc[k] - a.md->qacc[a.vmap[k]]) / scale);
      }
      for (int i = 0; i < a.m->nu; i++) {
        const int u = a.umap[i];
        force = fmax(force, fabs(a.d->actuator_force[i] - a.md->actuator_force[u]));
        fmax_seen = fmax(fmax_seen, fabs(a.md->actuator_force[u]));
        actdot = fmax(actdot, fabs(a.d->act_dot[a.m->actuators[i].actadr] - a.md->act_dot[u]));
      }
      limited += a.d->nefc > 0;
      states++;
    }
    mj_step(a.mm, a.md);
  }
  print_message("%d states (%d at a joint limit): ten_length %.1e m, moments %.1e m, "
                "actuator_force %.1e N (forces up to %.0f N), qfrc_actuator %.1e, act_dot %.1e "
                "1/s, qacc %.1e relative\n", states, limited, len, mom, force, fmax_seen, qfrc,
                actdot, qacc);
  assert_true(limited > 0 && fmax_seen > 10);
  assert_true(len <= 1e-12 && mom <= 1e-10);
  assert_true(force <= 1e-7 && qfrc <= 1e-7 && actdot <= 1e-9 && qacc <= 1e-6);
  close_arm(&a);
}

static void trajectory(int rk4) {
  arm a;
  open_arm(&a);
  if (rk4) {
    a.m->opt.integrator = SIM_INTEGRATOR_RK4;
    a.mm->opt.integrator = mjINT_RK4;
  }
  unsigned long long seed = 27;
  double q = 0, act = 0, travel = 0;
  for (int step = 0; step < 400; step++) { /* 2 s */
    if (step % 40 == 0) {
      commands(&a, &seed);
    }
    mj_step(a.mm, a.md);
    sim_step(a.m, a.d);
    for (int k = 0; k < a.m->nq; k++) {
      q = fmax(q, fabs(a.d->qpos[k] - a.md->qpos[a.qmap[k]]));
      travel = fmax(travel, fabs(a.md->qpos[a.qmap[k]]));
    }
    for (int i = 0; i < a.m->nu; i++) {
      act = fmax(act, fabs(a.d->act[a.m->actuators[i].actadr] - a.md->act[a.umap[i]]));
    }
  }
  print_message("2 s, %s, random commands every 0.2 s: max |qpos - MuJoCo's| %.1e rad (joints "
                "travel up to %.2f rad), max |act - MuJoCo's| %.1e\n", rk4 ? "RK4" : "Euler", q,
                travel, act);
  assert_true(travel > 0.5);
  assert_true(q <= 1e-6 && act <= 1e-9);
  close_arm(&a);
}

/* muscles on a joint, the <muscle> shortcut and a <general> muscle with its own parameters and
 * gear −1 (the antagonist): the length ranges (the joint's travel into its soft limits) and 2 s
 * from rest, both as MuJoCo's */
static const char joint_muscles[] =
    "<mujoco model=\"joint_muscles\">\n"
    "  <option timestep=\"0.002\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"link\">\n"
    "      <joint name=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-60 45\" damping=\"0.05\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.03\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <muscle name=\"flex\" joint=\"hinge\" force=\"20\" lmin=\"0.4\" ctrllimited=\"true\" "
    "ctrlrange=\"0 1\"/>\n"
    "    <general name=\"ext\" joint=\"hinge\" dyntype=\"muscle\" gaintype=\"muscle\" "
    "biastype=\"muscle\" dynprm=\"0.02 0.05\" gainprm=\"0.7 1.1 -1 100 0.5 1.6 1.5 1.3 1.2\" "
    "biasprm=\"0.7 1.1 -1 100 0.5 1.6 1.5 1.3 1.2\" gear=\"-1\" ctrllimited=\"true\" "
    "ctrlrange=\"0 1\"/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

static void test_joint_muscles(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  char dir[128], path[256], err[1024];
  ts_tmpdir(dir, sizeof dir, "muscle");
  snprintf(path, sizeof path, "%s/joint_muscles.xml", dir);
  ts_write_file(path, joint_muscles);
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, sizeof err);
  ts_rmtree(dir);
  if (!m) {
    fail_msg("%s", err);
  }
  mjModel *mm = ts_mj_load_xml(joint_muscles);
  mjData *md = ts_mj_data(mm);
  sim_data *d = sim_data_new(m);
  assert_int_equal(m->nu, 2);
  double range = 0, q = 0, act = 0, lo = 0, hi = 0;
  for (int i = 0; i < 2; i++) {
    for (int s = 0; s < 2; s++) {
      range = fmax(range, fabs(m->actuators[i].lengthrange[s] - mm->actuator_lengthrange[2 * i + s]));
    }
  }
  for (int step = 0; step < 1000; step++) {
    const double u[2] = {step < 500 ? 1 : 0.2, step < 300 ? 0 : 0.9};
    for (int i = 0; i < 2; i++) {
      d->ctrl[i] = md->ctrl[i] = u[i];
    }
    mj_step(mm, md);
    sim_step(m, d);
    q = fmax(q, fabs(d->qpos[0] - md->qpos[0]));
    lo = fmin(lo, md->qpos[0]), hi = fmax(hi, md->qpos[0]);
    for (int i = 0; i < 2; i++) {
      act = fmax(act, fabs(d->act[m->actuators[i].actadr] - md->act[i]));
    }
  }
  print_message("muscles on a joint: length ranges %.1e rad from MuJoCo's ([%.6f, %.6f]), 2 s "
                "(the joint from %.2f to %.2f rad): qpos %.1e rad, act %.1e\n", range,
                mm->actuator_lengthrange[0], mm->actuator_lengthrange[1], lo, hi, q, act);
  assert_true(hi - lo > 0.5);
  assert_true(range <= 1e-9 && q <= 1e-9 && act <= 1e-12);
  sim_data_free(d);
  sim_model_free(m);
  ts_mj_free(mm, md);
}

static void test_trajectory_euler(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  trajectory(0);
}

static void test_trajectory_rk4(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  trajectory(1);
}
#endif

TS_MUJOCO_MAIN(test_lengthrange, test_states, test_trajectory_euler, test_trajectory_rk4,
               test_joint_muscles)
