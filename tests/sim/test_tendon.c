/* tests/sim/test_tendon.c: tendons against MuJoCo 2.2.2, both compiled from the same MJCF text
 * (tendon_scenes.h).
 *  - paths: at 400 random poses every tendon's length (≤ 1e-12 m) and moment arms (≤ 1e-10)
 *    are MuJoCo's, for sites only, sphere and cylinder wraps with and without a side site, the
 *    inside wrap, a pulley and a fixed tendon; each wrap both bends and runs straight among the
 *    poses (printed: how often it wraps);
 *  - dynamics: per state (springs, dampers, limit and friction rows, actuators on tendons)
 *    with Newton and CG, pyramidal and elliptic, and over a 2 s trajectory.
 * The figures are printed (ctest -V -R test_tendon). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/deriv/deriv.h"
#include "sim/sim.h"
#include "support/mujoco.h"
#include "tendon_scenes.h"

#if ACHILLES_HAVE_MUJOCO
/* a deterministic uniform number in [lo, hi) */
static double uniform(unsigned long long *s, double lo, double hi) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

typedef struct side_by_side {
  sim_model *m;
  sim_data *d;
  mjModel *mm;
  mjData *md;
  int qmap[16], vmap[16];
} side_by_side;

static void open_pair(side_by_side *p, const char *xml) {
  char err[512];
  p->m = tendon_scene_load(xml, err, sizeof err);
  if (!p->m) {
    fail_msg("%s", err);
  }
  assert_true(p->m->nq <= 16 && p->m->nv <= 16);
  p->d = sim_data_new(p->m);
  p->mm = ts_mj_load_xml(xml);
  p->md = ts_mj_data(p->mm);
  ts_mj_maps(p->m, p->mm, p->qmap, p->vmap);
  assert_int_equal(p->m->ntendon, p->mm->ntendon);
}

static void close_pair(side_by_side *p) {
  sim_data_free(p->d);
  sim_model_free(p->m);
  ts_mj_free(p->mm, p->md);
}

/* our tendon t is MuJoCo's tendon of the same name */
static int their_tendon(const side_by_side *p, int t) {
  const int id = mj_name2id(p->mm, mjOBJ_TENDON, p->m->tendons[t].name);
  assert_true(id >= 0);
  return id;
}

static void test_paths(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  side_by_side p;
  open_pair(&p, tendon_scene_paths);
  const sim_model *m = p.m;
  enum { POSES = 400, NT = 16 };
  assert_true(m->ntendon <= NT);
  double len_err[NT] = {0}, mom_err[NT] = {0}, vel_err[NT] = {0};
  int wrapped[NT] = {0};
  unsigned long long seed = 25;
  for (int pose = 0; pose < POSES; pose++) {
    for (int j = 0; j < m->njnt; j++) {
      const sim_joint *jt = &m->joints[j];
      if (jt->qposadr >= 0) {
        const double q = jt->type == SIM_JOINT_SLIDE ? uniform(&seed, -0.2, 0.2)
                                                     : uniform(&seed, -3.14159, 3.14159);
        p.d->qpos[jt->qposadr] = q;
        p.md->qpos[p.qmap[jt->qposadr]] = q;
        const double v = uniform(&seed, -2, 2);
        p.d->qvel[jt->dofadr] = v;
        p.md->qvel[p.vmap[jt->dofadr]] = v;
      }
    }
    mj_forward(p.mm, p.md);
    sim_kinematics(m, p.d);
    sim_tendons(m, p.d);
    for (int t = 0; t < m->ntendon; t++) {
      const int id = their_tendon(&p, t);
      len_err[t] = fmax(len_err[t], fabs(p.d->ten_length[t] - p.md->ten_length[id]));
      vel_err[t] = fmax(vel_err[t], fabs(p.d->ten_velocity[t] - p.md->ten_velocity[id]));
      for (int k = 0; k < m->nv; k++) {
        const double ours = p.d->ten_J[t * m->nv + k], theirs = p.md->ten_J[id * m->nv + p.vmap[k]];
        mom_err[t] = fmax(mom_err[t], fabs(ours - theirs));
      }
      /* MuJoCo's path points: a site-geom-site piece that bends lists two more */
      const int pieces = m->tendons[t].wrapnum;
      wrapped[t] += m->tendons[t].spatial && p.md->ten_wrapnum[id] > pieces;
    }
  }
  print_message("| tendon | wraps in | length error, m | moment error | velocity error |\n");
  for (int t = 0; t < m->ntendon; t++) {
    print_message("| %s | %d of %d | %.1e | %.1e | %.1e |\n", m->tendons[t].name, wrapped[t],
                  POSES, len_err[t], mom_err[t], vel_err[t]);
    assert_true(len_err[t] <= 1e-12);
    assert_true(mom_err[t] <= 1e-10);
    assert_true(vel_err[t] <= 1e-10);
    int wraps_geom = 0;
    for (int w = 0; w < m->tendons[t].wrapnum; w++) {
      const sim_wrap_type ty = m->wraps[m->tendons[t].wrapadr + w].type;
      wraps_geom |= ty == SIM_WRAP_SPHERE || ty == SIM_WRAP_CYLINDER;
    }
    if (wraps_geom) { /* both the bent and the straight path are exercised */
      assert_true(wrapped[t] >= POSES / 20 && wrapped[t] <= POSES - POSES / 20);
    }
  }
  close_pair(&p);
}

/* --- dynamics --------------------------------------------------------------------------------- */

static void set_options(side_by_side *p, int newton, int elliptic, double tolerance) {
  p->m->opt.solver = newton ? SIM_SOLVER_NEWTON : SIM_SOLVER_CG;
  p->m->opt.cone = elliptic ? SIM_CONE_ELLIPTIC : SIM_CONE_PYRAMIDAL;
  p->m->opt.solver_iterations = 200;
  p->m->opt.solver_tolerance = tolerance;
  p->mm->opt.solver = newton ? mjSOL_NEWTON : mjSOL_CG;
  p->mm->opt.cone = elliptic ? mjCONE_ELLIPTIC : mjCONE_PYRAMIDAL;
  p->mm->opt.iterations = 200;
  p->mm->opt.tolerance = tolerance;
}

static void commands(side_by_side *p, double t) {
  const double u[3] = {4 * sin(3 * t), 0.3 * cos(2 * t), 0.5 * sin(5 * t)};
  for (int i = 0; i < p->m->nu; i++) {
    p->d->ctrl[i] = u[i % 3];
    p->md->ctrl[mj_name2id(p->mm, mjOBJ_ACTUATOR, p->m->actuators[i].name)] = u[i % 3];
  }
}

/* MuJoCo's state into ours */
static void copy_state(side_by_side *p) {
  for (int k = 0; k < p->m->nq; k++) {
    p->d->qpos[k] = p->md->qpos[p->qmap[k]];
  }
  for (int k = 0; k < p->m->nv; k++) {
    p->d->qvel[k] = p->md->qvel[p->vmap[k]];
    p->d->qacc_warmstart[k] = p->md->qacc_warmstart[p->vmap[k]];
  }
  p->d->time = p->md->time;
}

typedef struct state_errors {
  int states, limit_rows, friction_rows;
  double passive, actuator, force, qacc, energy;
} state_errors;

static int our_type(int mj_type) {
  switch (mj_type) {
  case mjCNSTR_FRICTION_DOF:
    return SIM_CNSTR_FRICTION_DOF;
  case mjCNSTR_FRICTION_TENDON:
    return SIM_CNSTR_FRICTION_TENDON;
  case mjCNSTR_LIMIT_JOINT:
    return SIM_CNSTR_LIMIT_JOINT;
  case mjCNSTR_LIMIT_TENDON:
    return SIM_CNSTR_LIMIT_TENDON;
  default:
    return -1;
  }
}

static void compare_state(side_by_side *p, state_errors *e) {
  const sim_model *m = p->m;
  sim_data *d = p->d;
  const mjData *md = p->md;
  mj_forward(p->mm, p->md);
  sim_forward(m, d);
  assert_int_equal(d->nefc, md->nefc);
  for (int i = 0; i < d->nefc; i++) {
    assert_int_equal(d->efc_type[i], our_type(md->efc_type[i]));
    e->limit_rows += d->efc_type[i] == SIM_CNSTR_LIMIT_TENDON;
    e->friction_rows += d->efc_type[i] == SIM_CNSTR_FRICTION_TENDON;
    e->force = fmax(e->force, fabs(d->efc_force[i] - md->efc_force[i]));
  }
  double scale = 1;
  for (int k = 0; k < m->nv; k++) {
    const int v = p->vmap[k];
    e->passive = fmax(e->passive, fabs(d->qfrc_passive[k] - md->qfrc_passive[v]));
    e->actuator = fmax(e->actuator, fabs(d->qfrc_actuator[k] - md->qfrc_actuator[v]));
    scale = fmax(scale, fabs(md->qacc[v]));
  }
  /* the potential energy holds the tendons' springs (MuJoCo's mj_energyPos) */
  e->energy = fmax(e->energy, fabs(sim_energy_potential(m, d) - md->energy[0]));
  for (int k = 0; k < m->nv; k++) {
    e->qacc = fmax(e->qacc, fabs(d->qacc[k] - md->qacc[p->vmap[k]]) / scale);
  }
  e->states++;
}

static void test_dynamics_states(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  for (int run = 0; run < 4; run++) {
    side_by_side p;
    open_pair(&p, tendon_scene_dynamics);
    set_options(&p, run < 2, run % 2, 1e-12);
    state_errors e = {0};
    for (int step = 0; step < 1500; step++) {
      commands(&p, p.md->time);
      if (step % 10 == 0) {
        copy_state(&p);
        compare_state(&p, &e);
      }
      mj_step(p.mm, p.md);
    }
    print_message("%s %s: %d states, %d tendon limit rows, %d tendon friction rows; passive "
                  "%.1e, actuator %.1e, row forces %.1e N, qacc %.1e relative, potential "
                  "energy %.1e J\n", run < 2 ? "Newton" : "CG", run % 2 ? "elliptic" : "pyramidal",
                  e.states, e.limit_rows, e.friction_rows, e.passive, e.actuator, e.force, e.qacc,
                  e.energy);
    assert_true(e.limit_rows > 10 && e.friction_rows > 10);
    assert_true(e.passive <= 1e-9 && e.actuator <= 1e-9);
    assert_true(e.force <= 1e-7 && e.qacc <= 1e-6 && e.energy <= 1e-12);
    close_pair(&p);
  }
}

static void test_dynamics_trajectory(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  side_by_side p;
  open_pair(&p, tendon_scene_dynamics);
  set_options(&p, 1, 0, 1e-10);
  double worst = 0, travel = 0;
  for (int step = 0; step < 1000; step++) { /* 2 s */
    commands(&p, p.md->time);
    mj_step(p.mm, p.md);
    sim_step(p.m, p.d);
    for (int k = 0; k < p.m->nq; k++) {
      worst = fmax(worst, fabs(p.d->qpos[k] - p.md->qpos[p.qmap[k]]));
      travel = fmax(travel, fabs(p.md->qpos[p.qmap[k]]));
    }
  }
  print_message("2 s trajectory (Newton, tolerance 1e-10): max |qpos - MuJoCo's| %.1e rad (joints "
                "travel up to %.2f rad)\n", worst, travel);
  assert_true(travel > 0.3);
  assert_true(worst <= 1e-6);
  close_pair(&p);
}

/* the load-time constants: a spring without springlength rests at the tendon's length with the
 * joints at their springref (MuJoCo 2.2.2's qpos_spring, not qpos0), length0 at qpos0, and the
 * rows' invweight0 = J·M⁻¹·Jᵀ, each MuJoCo's */
static void test_constants(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  static char xml[8192];
  const char *from = "<joint name=\"j1\" axis=\"0 1 0\" damping=\"0.01\"/>";
  const char *at = strstr(tendon_scene_dynamics, from);
  assert_non_null(at);
  snprintf(xml, sizeof xml, "%.*s<joint name=\"j1\" axis=\"0 1 0\" damping=\"0.01\" "
           "springref=\"0.4\" ref=\"0\"/>%s", (int)(at - tendon_scene_dynamics),
           tendon_scene_dynamics, at + strlen(from));
  side_by_side p;
  open_pair(&p, xml);
  double spring = 0, length0 = 0, weight = 0;
  for (int t = 0; t < p.m->ntendon; t++) {
    const int id = their_tendon(&p, t);
    spring = fmax(spring, fabs(p.m->tendons[t].springlength - p.mm->tendon_lengthspring[id]));
    length0 = fmax(length0, fabs(p.m->tendons[t].length0 - p.mm->tendon_length0[id]));
    weight = fmax(weight, fabs(p.m->tendons[t].invweight0 - p.mm->tendon_invweight0[id]) /
                              p.mm->tendon_invweight0[id]);
  }
  const int cable = sim_model_tendon(p.m, "cable");
  print_message("springlength %.1e m (the cable's %.6f m at springref 0.4, %.6f m at qpos0), "
                "length0 %.1e m, invweight0 %.1e relative\n", spring,
                p.m->tendons[cable].springlength, p.m->tendons[cable].length0, length0, weight);
  assert_true(fabs(p.m->tendons[cable].springlength - p.m->tendons[cable].length0) > 1e-3);
  assert_true(spring <= 1e-14 && length0 <= 1e-14 && weight <= 1e-12);
  close_pair(&p);
}

/* the tendons' derivatives are not built: sim_deriv refuses the model by name */
static void test_deriv_refuses(void **state) {
  (void)state;
  char err[512];
  sim_model *m = tendon_scene_load(tendon_scene_dynamics, err, sizeof err);
  assert_non_null(m);
  assert_null(sim_deriv_new(m, NULL, 0, err, sizeof err));
  print_message("sim_deriv_new: %s\n", err);
  assert_non_null(strstr(err, "tendon"));
  sim_model_free(m);
}
#endif

TS_MUJOCO_MAIN(test_paths, test_dynamics_states, test_dynamics_trajectory, test_constants,
               test_deriv_refuses)
