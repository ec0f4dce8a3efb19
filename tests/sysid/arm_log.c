/* tests/sysid/arm_log.c: the simulated arm and its logs (arm_log.h). */
#include "arm_log.h"

#include "support/model.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/chain.h"
#include "sensors/delay.h"
#include "sensors/rng.h"

static const char *const joint_names[ARM_NJ] = {"base_yaw", "shoulder", "elbow"};
static const char *const motor_names[ARM_NJ] = {"base_motor", "shoulder_motor", "elbow_motor"};

const char *const arm_param_list = "joint.*.damping,joint.*.armature,joint.*.frictionloss,"
                                   "body.upper_arm.mass,body.forearm.mass";

void arm_truth(arm_params *p) {
  *p = (arm_params){{0.05, 0.08, 0.05}, {0.002, 0.003, 0.002}, {0.02, 0.03, 0.02}, 0.6, 0.4, 0};
}

void arm_guess(arm_params *p) {
  arm_truth(p);
  double *v[11] = {&p->damping[0],  &p->damping[1],      &p->damping[2],      &p->armature[0],
                   &p->armature[1], &p->armature[2],     &p->frictionloss[0], &p->frictionloss[1],
                   &p->frictionloss[2], &p->mass_upper, &p->mass_fore};
  static const double f[11] = {1.4, 0.6, 1.5, 0.65, 1.35, 0.7, 1.45, 0.55, 1.3, 0.7, 1.4};
  for (int k = 0; k < 11; k++) {
    *v[k] *= f[k];
  }
}

int arm_param_values(const arm_params *p, double *out) {
  /* the order sysid gives joint.*.damping, joint.*.armature, joint.*.frictionloss, masses */
  double v[11] = {p->damping[0],      p->damping[1],      p->damping[2],     p->armature[0],
                  p->armature[1],     p->armature[2],     p->frictionloss[0], p->frictionloss[1],
                  p->frictionloss[2], p->mass_upper,      p->mass_fore};
  memcpy(out, v, sizeof v);
  return 11;
}

char *arm_json(char *buf, size_t sz, const arm_params *p, double h) {
  const char *motor =
      p->dc_motors == 1 ? "\"type\": \"dc_motor\", \"supply_voltage\": 12, \"resistance\": 2,"
                          " \"kt\": 0.02, \"ke\": 0.02, \"gear\": 100, \"efficiency\": 0.8,"
                          " \"current_limit\": 20"
      : p->dc_motors == 2 ? "\"type\": \"position_servo\", \"kp\": 20, \"kd\": 0.5,"
                            " \"ctrlrange\": [-3, 3]"
                          : "\"type\": \"motor\", \"gear\": 1, \"ctrlrange\": [-10, 10]";
  snprintf(
      buf, sz,
      "{\"name\": \"sysid_arm\", \"timestep\": %.17g, \"integrator\": \"euler\","
      " \"gravity\": [0, 0, -9.81], \"bodies\": ["
      "{\"name\": \"base\", \"parent\": \"world\", \"pos\": [0, 0, 0.05],"
      " \"joint\": {\"name\": \"base_yaw\", \"type\": \"hinge\", \"axis\": [0, 0, 1],"
      "  \"damping\": %.17g, \"armature\": %.17g, \"frictionloss\": %.17g},"
      " \"inertial\": {\"mass\": 0.8, \"com\": [0, 0, 0.04], \"inertia\": [0.0012, 0.0012, 0.0016, 0, 0, 0]}},"
      "{\"name\": \"upper_arm\", \"parent\": \"base\", \"pos\": [0, 0, 0.1],"
      " \"joint\": {\"name\": \"shoulder\", \"type\": \"hinge\", \"axis\": [0, 1, 0],"
      "  \"damping\": %.17g, \"armature\": %.17g, \"frictionloss\": %.17g},"
      " \"inertial\": {\"mass\": %.17g, \"com\": [0.125, 0, 0], \"inertia\": [0.0003, 0.0033, 0.0033, 0, 0, 0]}},"
      "{\"name\": \"forearm\", \"parent\": \"upper_arm\", \"pos\": [0.25, 0, 0],"
      " \"joint\": {\"name\": \"elbow\", \"type\": \"hinge\", \"axis\": [0, 1, 0],"
      "  \"damping\": %.17g, \"armature\": %.17g, \"frictionloss\": %.17g},"
      " \"inertial\": {\"mass\": %.17g, \"com\": [0.1, 0, 0], \"inertia\": [0.0002, 0.0014, 0.0014, 0, 0, 0]}}],"
      " \"actuators\": ["
      "{\"name\": \"base_motor\", \"joint\": \"base_yaw\", %s},"
      "{\"name\": \"shoulder_motor\", \"joint\": \"shoulder\", %s},"
      "{\"name\": \"elbow_motor\", \"joint\": \"elbow\", %s}]}",
      h, p->damping[0], p->armature[0], p->frictionloss[0], p->damping[1], p->armature[1],
      p->frictionloss[1], p->mass_upper, p->damping[2], p->armature[2], p->frictionloss[2],
      p->mass_fore, motor, motor, motor);
  return buf;
}

void arm_log_defaults(arm_log_opts *o) {
  *o = (arm_log_opts){.duration = 10,
                      .rate_hz = 1000,
                      .h = 0.0005,
                      .latency = 0.0015,
                      .white_sigma = 2e-4,
                      .resolution = 2 * M_PI / 16384,
                      .still_joint = -1,
                      .seed = 1};
}

/* the controller's set point of joint j at t: slow sines, a chirp, steps; moving through zero
   velocity often (friction's both signs) */
static double set_point(int j, double t) {
  switch (j) {
  case 0: return 0.8 * sin(1.3 * t) + 0.3 * sin(4.1 * t + 0.5);
  case 1: return -0.4 + 0.35 * sin(2 * M_PI * (0.2 + 0.08 * t) * t) + 0.15 * ((int)(t / 1.7) % 2 ? 1 : -1);
  default: return 0.6 * sin(2.3 * t + 1) + 0.25 * ((int)(t / 1.1) % 2 ? 1 : -1);
  }
}

static void series_alloc(sysid_series *s, int n) {
  memset(s, 0, sizeof *s);
  s->n = n, s->njoint = ARM_NJ, s->nact = ARM_NJ;
  s->t = calloc((size_t)n, sizeof(double));
  s->q = calloc((size_t)n * ARM_NJ, sizeof(double));
  s->u = calloc((size_t)n * ARM_NJ, sizeof(double));
  s->joint_name = calloc(ARM_NJ, sizeof(char *));
  s->act_name = calloc(ARM_NJ, sizeof(char *));
  for (int j = 0; j < ARM_NJ; j++) {
    s->joint_name[j] = strdup(joint_names[j]);
    s->act_name[j] = strdup(motor_names[j]);
  }
  snprintf(s->source, sizeof s->source, "simulated arm log");
}

int arm_log_make(const sim_model *m, const arm_log_opts *o, sysid_series *s, sysid_meas *meas) {
  int per = (int)lround(1 / (o->rate_hz * o->h)), lag = (int)lround(o->latency / o->h);
  int n = (int)lround(o->duration * o->rate_hz);
  series_alloc(s, n);
  sim_data *d = sim_data_new(m);
  sens_chain ch[ARM_NJ];
  sens_delay dl;
  double *dbuf = calloc((size_t)(lag + 1) * ARM_NJ, sizeof(double)), late[ARM_NJ] = {0};
  sens_chain_params cp;
  sens_chain_params_default(&cp);
  cp.white_sigma = o->white_sigma, cp.resolution = o->resolution;
  sens_rng events;
  sens_rng_seed(&events, o->seed, 99);
  for (int j = 0; j < ARM_NJ; j++) {
    sens_chain_init(&ch[j], &cp, o->rate_hz, o->seed, (uint64_t)j);
    meas[j] = (sysid_meas){o->latency, 1, 0,
                           sqrt(o->white_sigma * o->white_sigma + o->resolution * o->resolution / 12)};
  }
  sens_delay_init(&dl, dbuf, lag, ARM_NJ);
  int jq[ARM_NJ], jv[ARM_NJ], act[ARM_NJ];
  for (int j = 0; j < ARM_NJ; j++) {
    int id = sim_model_joint(m, joint_names[j]);
    jq[j] = m->joints[id].qposadr, jv[j] = m->joints[id].dofadr;
    act[j] = sim_model_actuator(m, motor_names[j]);
    d->qpos[jq[j]] = set_point(j, 0) * (j != o->still_joint);
    late[j] = d->qpos[jq[j]];
  }
  double prev[ARM_NJ] = {0};
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    double t = i / o->rate_hz;
    s->t[i] = t;
    /* the reading at t: the chain on the position latency ago */
    for (int j = 0; j < ARM_NJ; j++) {
      double y = sens_chain_step(&ch[j], late[j], &events);
      s->q[(size_t)i * ARM_NJ + j] = y;
      /* the firmware's PD on its readings (gravity-compensating bias on the shoulder) */
      double e = set_point(j, t) - y, de = i ? (y - prev[j]) * o->rate_hz : 0;
      double u = (j == 0 ? 6 : j == 1 ? 25 : 10) * e - (j == 0 ? 0.4 : j == 1 ? 1.0 : 0.4) * de +
                 (j == 1 ? -1.8 * cos(y) : 0);
      u = j == o->still_joint ? 0 : fmax(-10, fmin(10, u));
      const sim_actuator *a = &m->actuators[act[j]];
      if (a->type == SIM_ACT_POSITION_SERVO) { /* the servo closes its own loop on the truth */
        u = j == o->still_joint ? 0 : set_point(j, t);
      } else if (a->type == SIM_ACT_DC_MOTOR) { /* the torque's duty, back-EMF left to the motor */
        u = fmax(-1, fmin(1, u * a->resistance /
                                 (a->efficiency * a->gear * a->kt * a->supply_voltage)));
      }
      prev[j] = y;
      s->u[(size_t)i * ARM_NJ + j] = u;
      d->ctrl[act[j]] = u;
    }
    for (int k = 0; k < per; k++) {
      sim_step(m, d);
      double q[ARM_NJ];
      for (int j = 0; j < ARM_NJ; j++) {
        q[j] = d->qpos[jq[j]];
      }
      if (lag == 0) {
        memcpy(late, q, sizeof late);
      } else {
        sens_delay_push(&dl, q, late);
      }
      (void)jv;
    }
    rc = sim_state_nonfinite(m, d) >= 0 ? -1 : 0;
  }
  free(dbuf);
  sim_data_free(d);
  return rc;
}

int arm_fixture_setup(void **state, double duration_s) {
  arm_fixture *f = calloc(1, sizeof *f);
  char json[8192];
  arm_params truth;
  arm_truth(&truth);
  arm_log_opts lo;
  arm_log_defaults(&lo);
  lo.duration = duration_s;
  f->m = ts_model(arm_json(json, sizeof json, &truth, lo.h));
  *state = f;
  return arm_log_make(f->m, &lo, &f->s, f->meas);
}

int arm_fixture_teardown(void **state) {
  arm_fixture *f = *state;
  sysid_series_free(&f->s);
  sim_model_free(f->m);
  free(f);
  return 0;
}
