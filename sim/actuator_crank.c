/* sim/actuator_crank.c: the slider-crank transmission of an actuator (MuJoCo 2.2.2's
 * mjTRN_SLIDERCRANK in mj_transmission) and its "slider_crank" block in the robot JSON.
 *
 * A rod of length r joins the crank pin c (crank_site) to a slider running along the unit axis
 * a through s (slider_site, a its direction). With v = c − s the slider sits where the rod
 * meets the axis: the length is
 *   L = a·v − √det,  det = (a·v)² + r² − v·v,
 * and the moment ∂L/∂q = (∂L/∂a)·J_a + (∂L/∂v)·(J_c − J_s), J_a = ∂a/∂q (the axis turns with
 * its body: column j is ω_j × a), with ∂L/∂v = a·(1 − a·v/√det) + v/√det and
 * ∂L/∂a = v·(1 − a·v/√det). When det ≤ 0 the rod is too short to reach the axis (MuJoCo's
 * "broken" crank): then L = a·v with ∂L/∂v = a and ∂L/∂a = v, as MuJoCo does. */
#include "sim/actuator_crank.h"
#include "sim/sim.h"
#include "sim/spatial.h"

#include <math.h>
#include <string.h>

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void sim__crank_transmission(const sim_model *m, sim_data *d, int index, double *length,
                             double *velocity) {
  const sim_actuator *u = &m->actuators[index];
  const int nv = m->nv, sb = m->sites[u->slider_site].body, cb = m->sites[u->crank_site].body;
  const double *s = d->site_xpos + 3 * u->slider_site, *c = d->site_xpos + 3 * u->crank_site;
  double axis[3], vec[3], dlda[3], dldv[3];
  sim_mat3_vec(axis, d->xmat + 9 * sb, u->slider_axis);
  for (int k = 0; k < 3; k++) {
    vec[k] = c[k] - s[k];
  }
  const double av = dot3(vec, axis), r = u->crank_length;
  const double det = av * av + r * r - dot3(vec, vec);
  if (det <= 0) { /* the rod cannot reach the axis */
    *length = av;
    memcpy(dlda, vec, sizeof vec);
    memcpy(dldv, axis, sizeof axis);
  } else {
    const double sdet = sqrt(det), f = 1 - av / sdet;
    *length = av - sdet;
    for (int k = 0; k < 3; k++) {
      dldv[k] = axis[k] * f + vec[k] / sdet;
      dlda[k] = vec[k] * f;
    }
  }
  /* J_c − J_s and the axis' rotation, in the data's 3×nv scratch rows */
  double *jc = d->con_jac, *js = jc + 3 * (size_t)nv, *jr = js + 3 * (size_t)nv;
  double *moment = d->trn_moment + (size_t)index * nv;
  sim_jac_point(m, d, jc, NULL, cb, c);
  sim_jac_point(m, d, js, jr, sb, s);
  double vel = 0;
  for (int j = 0; j < nv; j++) {
    const double w[3] = {jr[j], jr[nv + j], jr[2 * nv + j]};
    const double ja[3] = {w[1] * axis[2] - w[2] * axis[1], w[2] * axis[0] - w[0] * axis[2],
                          w[0] * axis[1] - w[1] * axis[0]};
    double mj = 0;
    for (int k = 0; k < 3; k++) {
      mj += dlda[k] * ja[k] + dldv[k] * (jc[k * nv + j] - js[k * nv + j]);
    }
    moment[j] = mj;
    vel += mj * d->qvel[j];
  }
  *velocity = vel;
}

/* "slider_crank": {"crank_site", "slider_site", "slider_axis", "length"} in place of "joint" */
int sim__crank_parse(const sim_json_ctx *L, const cJSON *obj, const char *path,
                     const sim_model *m, sim_actuator *a) {
  static const char *const keys[] = {"crank_site", "slider_site", "slider_axis", "length",
                                     "comment", NULL};
  char p[SIM_JSON_PATH_MAX], q[SIM_JSON_PATH_MAX], crank[SIM_NAME_MAX] = "",
                                                     slider[SIM_NAME_MAX] = "";
  sim_json_path_join(p, path, "slider_crank");
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, "slider_crank");
  if (cJSON_HasObjectItem(obj, "joint") || cJSON_HasObjectItem(obj, "tendon")) {
    return sim_json_fail(L, p, "an actuator drives a joint, a tendon or a slider-crank, one of "
                         "them");
  }
  if (a->type != SIM_ACT_MOTOR && a->type != SIM_ACT_POSITION_SERVO &&
      a->type != SIM_ACT_VELOCITY_SERVO) {
    return sim_json_fail(L, p, "a %s drives a joint (a slider-crank takes a motor, a "
                         "position_servo or a velocity_servo)",
                         a->type == SIM_ACT_DC_MOTOR ? "dc_motor" : "servo");
  }
  a->slider_axis[0] = a->slider_axis[1] = 0, a->slider_axis[2] = 1;
  if (sim_json_expect_object(L, o, p) || sim_json_check_keys(L, o, p, keys) ||
      sim_json_read_name(L, o, p, "crank_site", crank, 1) ||
      sim_json_read_name(L, o, p, "slider_site", slider, 1) ||
      sim_json_read_vector(L, o, p, "slider_axis", a->slider_axis, 3, 0) ||
      sim_json_normalize_unit(L, p, "slider_axis", a->slider_axis, 3) ||
      sim_json_read_number(L, o, p, "length", &a->crank_length, 1) ||
      sim_json_check_min(L, p, "length", a->crank_length, 0, 1)) {
    return -1;
  }
  a->crank_site = sim_model_site(m, crank);
  a->slider_site = sim_model_site(m, slider);
  if (a->crank_site < 0 || a->slider_site < 0) {
    sim_json_path_join(q, p, a->crank_site < 0 ? "crank_site" : "slider_site");
    return sim_json_fail(L, q, "unknown site \"%s\"", a->crank_site < 0 ? crank : slider);
  }
  a->joint = a->dof = a->qposadr = -1;
  return 0;
}

/* --- adhesion ----------------------------------------------------------------------------- */

/* MuJoCo 2.2.2's mjTRN_BODY: over the contacts with a geom of the body itself (geom1's or
 * geom2's body), the normal row of each (n·(J₂ − J₁) at the contact point: what the pyramid's
 * edges average to, the normal row of an elliptic or frictionless one), summed, divided by
 * their count and negated, so that a positive force pulls the body onto what it touches.
 * Every contact here is active (margin 0: MuJoCo's contacts in a gap, which it adds too, do not
 * arise). */
void sim__adhesion_transmission(const sim_model *m, sim_data *d, int index) {
  const int nv = m->nv, body = m->actuators[index].adhesion_body;
  double *moment = d->trn_moment + (size_t)index * nv;
  double *j1 = d->con_jac, *j2 = j1 + 3 * (size_t)nv;
  memset(moment, 0, (size_t)nv * sizeof(double));
  int count = 0;
  for (int c = 0; c < d->ncon; c++) {
    const int b1 = m->geoms[d->con_geom[2 * c]].body, b2 = m->geoms[d->con_geom[2 * c + 1]].body;
    if (b1 != body && b2 != body) {
      continue;
    }
    const double *p = d->con_pos + 3 * c, *n = d->con_frame + 9 * c;
    sim_jac_point(m, d, j1, NULL, b1, p);
    sim_jac_point(m, d, j2, NULL, b2, p);
    for (int k = 0; k < nv; k++) {
      moment[k] += n[0] * (j2[k] - j1[k]) + n[1] * (j2[nv + k] - j1[nv + k]) +
                   n[2] * (j2[2 * nv + k] - j1[2 * nv + k]);
    }
    count++;
  }
  for (int k = 0; count > 0 && k < nv; k++) {
    moment[k] *= -1.0 / count;
  }
}

int sim__adhesion_parse(const sim_json_ctx *L, const cJSON *obj, const char *path,
                        const sim_model *m, sim_actuator *a) {
  static const char *const keys[] = {"body", "comment", NULL};
  char p[SIM_JSON_PATH_MAX], q[SIM_JSON_PATH_MAX], body[SIM_NAME_MAX] = "";
  sim_json_path_join(p, path, "adhesion");
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, "adhesion");
  if (cJSON_HasObjectItem(obj, "joint") || cJSON_HasObjectItem(obj, "slider_crank") ||
      cJSON_HasObjectItem(obj, "tendon")) {
    return sim_json_fail(L, p, "an actuator drives a joint, a tendon, a slider-crank or a body's "
                         "adhesion, one of them");
  }
  if (a->type != SIM_ACT_MOTOR) {
    return sim_json_fail(L, p, "adhesion takes a motor (force = gear·ctrl, MuJoCo's gain)");
  }
  if (sim_json_expect_object(L, o, p) || sim_json_check_keys(L, o, p, keys) ||
      sim_json_read_name(L, o, p, "body", body, 1)) {
    return -1;
  }
  a->adhesion_body = sim_model_body(m, body);
  if (a->adhesion_body <= 0) {
    sim_json_path_join(q, p, "body");
    return sim_json_fail(L, q, a->adhesion_body < 0 ? "unknown body \"%s\""
                                                    : "the world cannot adhere (\"%s\")", body);
  }
  a->joint = a->dof = a->qposadr = -1;
  return 0;
}
