/* sim/muscle_range.c: the muscles' load-time constants: acc0 (MuJoCo's actuator_acc0, the size
 * of the acceleration a unit force along the actuator gives at qpos0, |M⁻¹·moment|) and the
 * length range a muscle without one gets, found as MuJoCo 2.2.2's compiler finds it
 * (engine_setconst.c: mj_setLengthRange with <compiler><lengthrange>'s defaults).
 *
 * That procedure simulates: from qpos0 at rest, with gravity, contacts, passive forces, friction
 * loss and actuation switched off (joint and tendon limits stay, and Euler's implicit joint
 * damping, which MuJoCo keeps), a force along the actuator's moment that accelerates it by
 * `accel` pulls it to one end of its travel, then the other; the velocity is bled by
 * exp(−h/timeconst) each step. The lengths over the last `inteval` seconds of `inttotal` give
 * the end (the smallest of them for the lower end, the largest for the upper), and they must
 * have settled to within tolrange of the range. The simulation runs on a copy of the model's
 * description with those switches, by the same pipeline as every step (sim_step, Euler), so
 * it reaches the figures MuJoCo reaches. */
#include "sim/load_internal.h"
#include "sim/tendon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MuJoCo 2.2.2's mj_defaultLROpt (mode "muscle", useexisting, no uselimit) */
static const struct {
  double accel, maxforce, timeconst, timestep, inttotal, inteval, tolrange;
} lr_opt = {20, 0, 1, 0.01, 10, 2, 0.05};

/* |M⁻¹·moment| at qpos0 of every actuator that needs it (muscles) */
static void set_acc0(sim_model *m, sim_data *d, double *moment) {
  memcpy(d->qpos, m->qpos0, (size_t)m->nq * sizeof(double));
  sim_kinematics(m, d);
  sim_tendons(m, d);
  sim_crba(m, d);
  sim_factor_m(m, d);
  for (int i = 0; i < m->nu; i++) {
    sim__actuator_moment(m, d, i, moment);
    sim_solve_m(m, d, moment);
    double s = 0;
    for (int k = 0; k < m->nv; k++) {
      s += moment[k] * moment[k];
    }
    m->actuators[i].acc0 = sqrt(s);
  }
}

/* One step of the simulation toward side (0: shorter, 1: longer): the force that accelerates
 * the actuator by accel along its moment, then sim_step. Returns the length before the step. */
static double pull_step(const sim_model *c, sim_data *d, int a, int side, double *moment) {
  const int nv = c->nv;
  const double decay = exp(-c->opt.timestep / fmax(0.01, lr_opt.timeconst));
  for (int k = 0; k < nv; k++) {
    d->qvel[k] *= decay;
  }
  sim_kinematics(c, d);
  sim_tendons(c, d);
  sim_crba(c, d);
  sim_factor_m(c, d);
  sim__actuator_moment(c, d, a, moment);
  memcpy(d->scratch, moment, (size_t)nv * sizeof(double));
  sim_solve_m(c, d, d->scratch);
  double nrm = 0;
  for (int k = 0; k < nv; k++) {
    nrm += d->scratch[k] * d->scratch[k];
  }
  const double scale = (2 * side - 1) * lr_opt.accel / fmax(1e-15, sqrt(nrm));
  for (int k = 0; k < nv; k++) {
    d->qfrc_applied[k] = moment[k] * scale;
  }
  const double len = sim__actuator_length(&c->actuators[a], d);
  sim_step(c, d);
  return len;
}

/* the range of muscle a by simulation on the switched-off copy c; 0, or -1 with a message */
static int find_range(const sim_json_ctx *L, const sim_model *c, sim_data *d, int a,
                      double *moment, double out[2]) {
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_index(p, "actuators", a);
  double lmin[2] = {0, 0}, lmax[2] = {0, 0};
  for (int side = 0; side < 2; side++) {
    sim_data_reset(c, d);
    int updated = 0;
    while (d->time < lr_opt.inttotal) {
      const double len = pull_step(c, d, a, side, moment);
      if (sim_state_nonfinite(c, d) >= 0) {
        return sim_json_fail(L, p, "the length range simulation of muscle \"%s\" is unstable "
                             "(give it a \"lengthrange\")", c->actuators[a].name);
      }
      if (d->time > lr_opt.inttotal - lr_opt.inteval) {
        lmin[side] = !updated || len < lmin[side] ? len : lmin[side];
        lmax[side] = !updated || len > lmax[side] ? len : lmax[side];
        updated = 1;
      }
    }
  }
  out[0] = lmin[0], out[1] = lmax[1];
  const double dif = out[1] - out[0];
  if (!(dif > 0)) {
    return sim_json_fail(L, p, "muscle \"%s\": the length range found, (%g, %g), is empty (its "
                         "tendon does not move: give it a \"lengthrange\")", c->actuators[a].name,
                         out[0], out[1]);
  }
  for (int side = 0; side < 2; side++) {
    if (lmax[side] - lmin[side] > lr_opt.tolrange * dif) {
      return sim_json_fail(L, p, "muscle \"%s\": the length range simulation did not settle at "
                           "its %s end (lengths %g to %g over the last %g s; range %g to %g): "
                           "give it a \"lengthrange\"", c->actuators[a].name,
                           side ? "upper" : "lower", lmin[side], lmax[side], lr_opt.inteval,
                           out[0], out[1]);
    }
  }
  return 0;
}

/* the copy of m the range simulation runs on: no gravity, contacts, friction loss, passive
 * forces or actuation; Euler at lr_opt.timestep. Its arrays are the caller's to free. */
static int switched_off(sim_model *c, const sim_model *m) {
  *c = *m;
  c->opt.gravity[0] = c->opt.gravity[1] = c->opt.gravity[2] = 0;
  c->opt.timestep = lr_opt.timestep;
  c->opt.integrator = SIM_INTEGRATOR_EULER; /* MuJoCo's mj_step2 integrates with Euler */
  c->opt.disable = SIM_DISABLE_PASSIVE | SIM_DISABLE_ACTUATION;
  c->names = NULL;
  c->joints = malloc(((size_t)m->njnt + 1) * sizeof *c->joints);
  c->geoms = malloc(((size_t)m->ngeom + 1) * sizeof *c->geoms);
  c->tendons = malloc(((size_t)m->ntendon + 1) * sizeof *c->tendons);
  if (!c->joints || !c->geoms || !c->tendons) {
    return -1;
  }
  /* a model without geoms or tendons has NULL arrays: nothing to copy (memcpy takes no NULL) */
  if (m->njnt > 0) {
    memcpy(c->joints, m->joints, (size_t)m->njnt * sizeof *c->joints);
  }
  if (m->ngeom > 0) {
    memcpy(c->geoms, m->geoms, (size_t)m->ngeom * sizeof *c->geoms);
  }
  if (m->ntendon > 0) {
    memcpy(c->tendons, m->tendons, (size_t)m->ntendon * sizeof *c->tendons);
  }
  for (int j = 0; j < m->njnt; j++) {
    c->joints[j].frictionloss = 0;
  }
  for (int g = 0; g < m->ngeom; g++) {
    c->geoms[g].contype = c->geoms[g].conaffinity = 0;
  }
  for (int t = 0; t < m->ntendon; t++) {
    c->tendons[t].frictionloss = 0;
  }
  return 0;
}

static int needs_range(const sim_actuator *a) {
  return a->type == SIM_ACT_MUSCLE && !(a->lengthrange[0] < a->lengthrange[1]);
}

int sim__muscle_setconst(const sim_json_ctx *L, sim_model *m) {
  int muscles = 0, ranges = 0;
  for (int i = 0; i < m->nu; i++) {
    muscles += m->actuators[i].type == SIM_ACT_MUSCLE;
    ranges += needs_range(&m->actuators[i]);
  }
  if (muscles == 0) {
    return 0;
  }
  sim_data *d = sim__data_alloc(m);
  double *moment = malloc(((size_t)m->nv + 1) * sizeof *moment);
  sim_model c;
  memset(&c, 0, sizeof c);
  int rc = d && moment && (ranges == 0 || switched_off(&c, m) == 0)
               ? 0
               : sim_json_fail(L, "actuators", "out of memory");
  if (rc == 0) {
    set_acc0(m, d, moment);
  }
  for (int i = 0; rc == 0 && i < m->nu; i++) {
    if (needs_range(&m->actuators[i])) {
      double range[2] = {0, 0};
      rc = find_range(L, &c, d, i, moment, range);
      m->actuators[i].lengthrange[0] = range[0];
      m->actuators[i].lengthrange[1] = range[1];
    }
  }
  free(c.joints);
  free(c.geoms);
  free(c.tendons);
  free(moment);
  sim_data_free(d);
  return rc;
}
