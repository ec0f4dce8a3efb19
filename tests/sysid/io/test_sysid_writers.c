/* tests/sysid/io/test_sysid_writers.c: what `achilles sysid` writes (sysid/robot_patch.c,
 * sysid/report_write.c). A report with chosen values is written into the shipped robot files
 * and the patched document is loaded again: the model must hold exactly those values (joints,
 * bodies, actuators; a smart servo's gearbox share in its servo block, so the loader's sum is
 * the fitted value). The JSON report carries every field of docs/sysid.md section 6, with null
 * for a standard error the log cannot give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"
#include "sysid/report_write.h"
#include "sysid/robot_patch.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"
#define SERVO ACHILLES_SOURCE_DIR "/configs/servo_arm.json"

static sysid_param_result param(const char *name, int kind, const char *element,
                                const char *field, double initial, double value) {
  sysid_param_result p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "%s", name);
  p.kind = kind;
  snprintf(p.element, sizeof p.element, "%s", element);
  snprintf(p.field, sizeof p.field, "%s", field);
  p.unit = "u";
  p.initial = initial;
  p.value = value;
  p.stderr_ = 0.001;
  p.identifiable = 1;
  return p;
}

static cJSON *document(const char *path) {
  char err[512];
  const sim_import_options o = {0, NULL, NULL};
  cJSON *doc = sim_import_file(path, &o, err, sizeof err);
  if (!doc) {
    fail_msg("%s", err);
  }
  return doc;
}

static sim_model *reload(cJSON *doc) {
  char err[512];
  char *text = cJSON_PrintUnformatted(doc);
  sim_model *m = sim_model_load_string(text, "patched.json", err, sizeof err);
  free(text);
  if (!m) {
    fail_msg("the patched document does not load: %s", err);
  }
  return m;
}

static void test_club_arm(void **state) {
  (void)state;
  sim_model *m0 = ts_model_file(CLUB);
  sysid_param_result p[] = {
      param("joint.elbow.damping", SIM_PARAM_JOINT, "elbow", "damping", 0.05, 0.0625),
      param("joint.shoulder.armature", SIM_PARAM_JOINT, "shoulder", "armature", 0.003, 0.0041),
      param("joint.base_yaw.frictionloss", SIM_PARAM_JOINT, "base_yaw", "frictionloss", 0.02,
            0.0173),
      param("body.forearm.mass", SIM_PARAM_BODY, "forearm", "mass", 0.4, 0.47),
      param("body.forearm.com_x", SIM_PARAM_BODY, "forearm", "com_x", 0.1, 0.11),
      param("body.wrist.iyy", SIM_PARAM_BODY, "wrist", "iyy", 0.00006, 0.00007),
      param("actuator.shoulder_motor.kt", SIM_PARAM_ACTUATOR, "shoulder_motor", "kt", 0.02, 0.021),
      param("actuator.elbow_motor.resistance", SIM_PARAM_ACTUATOR, "elbow_motor", "resistance",
            3.0, 3.3),
  };
  sysid_report r;
  memset(&r, 0, sizeof r);
  r.np = (int)(sizeof p / sizeof p[0]);
  r.param = p;
  cJSON *doc = document(CLUB);
  char err[512] = "";
  assert_int_equal(sysid_robot_patch(doc, &r, m0, err, sizeof err), 0);
  sim_model *m = reload(doc);
  assert_true(m->joints[sim_model_joint(m, "elbow")].damping == 0.0625);
  assert_true(m->joints[sim_model_joint(m, "shoulder")].armature == 0.0041);
  assert_true(m->joints[sim_model_joint(m, "base_yaw")].frictionloss == 0.0173);
  const sim_body *fa = &m->bodies[sim_model_body(m, "forearm")];
  assert_true(fa->mass == 0.47);
  assert_true(fabs(fa->com[0] - 0.11) < 1e-15);
  const sim_actuator *sm = &m->actuators[sim_model_actuator(m, "shoulder_motor")];
  assert_true(sm->kt == 0.021);
  assert_true(m->actuators[sim_model_actuator(m, "elbow_motor")].resistance == 3.3);
  /* what the fit did not name is as it was */
  assert_true(m->joints[sim_model_joint(m, "wrist_roll")].damping ==
              m0->joints[sim_model_joint(m0, "wrist_roll")].damping);
  /* the inertia entry landed in its place of [ixx, iyy, izz, ixy, ixz, iyz] */
  cJSON *wrist = NULL, *b;
  cJSON_ArrayForEach(b, cJSON_GetObjectItem(doc, "bodies")) {
    if (strcmp(cJSON_GetObjectItem(b, "name")->valuestring, "wrist") == 0) {
      wrist = b;
    }
  }
  cJSON *inertia = cJSON_GetObjectItem(cJSON_GetObjectItem(wrist, "inertial"), "inertia");
  assert_true(cJSON_GetArrayItem(inertia, 1)->valuedouble == 0.00007);
  assert_true(cJSON_GetArrayItem(inertia, 0)->valuedouble == 0.00008);
  sim_model_free(m);

  /* a parameter the document has no place for is named */
  sysid_param_result bad = param("joint.knee.damping", SIM_PARAM_JOINT, "knee", "damping", 1, 2);
  r.np = 1;
  r.param = &bad;
  assert_int_equal(sysid_robot_patch(doc, &r, m0, err, sizeof err), -1);
  assert_non_null(strstr(err, "joint.knee.damping: the robot document has no place for it"));
  cJSON_Delete(doc);
  sim_model_free(m0);
}

/* A servo joint's armature and frictionloss hold the servo's gearbox (sim/servo_spec.h): the
 * patch moves the gearbox's share, and the file loads back to the fitted totals. */
static void test_servo_gearbox(void **state) {
  (void)state;
  sim_model *m0 = ts_model_file(SERVO);
  const int j = sim_model_joint(m0, "elbow");
  assert_true(j >= 0);
  const double arm0 = m0->joints[j].armature, fl0 = m0->joints[j].frictionloss;
  const double dmp0 = m0->joints[j].damping;
  assert_true(arm0 > 0 && fl0 > 0);
  sysid_param_result p[] = {
      param("joint.elbow.armature", SIM_PARAM_JOINT, "elbow", "armature", arm0, arm0 * 1.4),
      param("joint.elbow.frictionloss", SIM_PARAM_JOINT, "elbow", "frictionloss", fl0, fl0 * 0.6),
      param("joint.elbow.damping", SIM_PARAM_JOINT, "elbow", "damping", dmp0, dmp0 * 1.3),
  };
  sysid_report r;
  memset(&r, 0, sizeof r);
  r.np = 3;
  r.param = p;
  cJSON *doc = document(SERVO);
  char err[512] = "";
  assert_int_equal(sysid_robot_patch(doc, &r, m0, err, sizeof err), 0);
  sim_model *m = reload(doc);
  assert_true(fabs(m->joints[j].armature - arm0 * 1.4) < 1e-15 * arm0);
  assert_true(fabs(m->joints[j].frictionloss - fl0 * 0.6) < 1e-15);
  assert_true(fabs(m->joints[j].damping - dmp0 * 1.3) < 1e-15);
  /* the shares went into the servo block */
  cJSON *a, *servo = NULL;
  cJSON_ArrayForEach(a, cJSON_GetObjectItem(doc, "actuators")) {
    if (m0->actuators[sim_model_actuator(m0, cJSON_GetObjectItem(a, "name")->valuestring)].joint ==
        j) {
      servo = cJSON_GetObjectItem(a, "servo");
    }
  }
  assert_non_null(cJSON_GetObjectItem(servo, "gear_friction"));
  assert_non_null(cJSON_GetObjectItem(servo, "rotor_inertia"));
  /* a total below the joint's own figure lowers the joint's key, the share goes to 0 */
  sim_model_free(m);
  sysid_param_result low = param("joint.elbow.damping", SIM_PARAM_JOINT, "elbow", "damping",
                                 dmp0, 1e-5);
  r.np = 1;
  r.param = &low;
  assert_int_equal(sysid_robot_patch(doc, &r, m0, err, sizeof err), 0);
  m = reload(doc);
  assert_true(fabs(m->joints[j].damping - 1e-5) < 1e-18);
  sim_model_free(m);
  cJSON_Delete(doc);
  sim_model_free(m0);
}

static void test_report_json(void **state) {
  (void)state;
  sysid_param_result p[2] = {
      param("joint.elbow.damping", SIM_PARAM_JOINT, "elbow", "damping", 0.05, 0.06),
      param("joint.base_yaw.damping", SIM_PARAM_JOINT, "base_yaw", "damping", 0.05, 0.07),
  };
  p[1].identifiable = 0;
  p[1].stderr_ = NAN;
  sysid_corr corr = {0, 1, 0.95};
  char joint[1][SIM_NAME_MAX] = {"elbow"};
  double rb = 0.1, ra = 0.001, mb = 0.2, ma = 0.003, sv[2] = {10, 1e-9};
  char weak[1][256] = {"joint.base_yaw.damping (never moves)"};
  sysid_report r = {.np = 2, .param = p, .ncorr = 1, .corr = &corr, .njoint = 1, .joint = joint,
                    .rms_before = &rb, .rms_after = &ra, .max_before = &mb, .max_after = &ma,
                    .iterations = 7, .seconds = 1.5, .cost_before = 100, .cost_after = 2,
                    .nresidual = 1000, .nunknown = 10, .status = 0, .nweak = 1, .weak = weak,
                    .singular_values = sv};
  snprintf(r.stop, sizeof r.stop, "small step");
  const sysid_report_source src = {"arm.json", "run.ndjson", 500, 3};
  cJSON *o = sysid_report_json(&r, &src);
  assert_non_null(o);
  assert_string_equal(cJSON_GetObjectItem(o, "format")->valuestring, "achilles-sysid-report");
  assert_int_equal(cJSON_GetObjectItem(o, "iterations")->valueint, 7);
  assert_int_equal(cJSON_GetObjectItem(o, "windows")->valueint, 3);
  assert_string_equal(cJSON_GetObjectItem(o, "stop")->valuestring, "small step");
  cJSON *ps = cJSON_GetObjectItem(o, "parameters");
  assert_int_equal(cJSON_GetArraySize(ps), 2);
  cJSON *p0 = cJSON_GetArrayItem(ps, 0), *p1 = cJSON_GetArrayItem(ps, 1);
  assert_true(cJSON_GetObjectItem(p0, "value")->valuedouble == 0.06);
  assert_true(cJSON_GetObjectItem(p0, "stderr")->valuedouble == 0.001);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(p1, "stderr")));
  assert_true(cJSON_IsFalse(cJSON_GetObjectItem(p1, "identifiable")));
  cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "correlations"), 0);
  assert_string_equal(cJSON_GetObjectItem(c0, "b")->valuestring, "joint.base_yaw.damping");
  cJSON *j0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "joints"), 0);
  assert_true(cJSON_GetObjectItem(j0, "rms_after")->valuedouble == 0.001);
  assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "unidentifiable"), 0)->valuestring,
                      weak[0]);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "singular_values")), 2);
  cJSON_Delete(o);

  /* the text report names the same */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  sysid_report_print(f, &r, &src);
  fclose(f);
  assert_non_null(strstr(text, "7 iterations in 1.5 s (small step); cost 100 -> 2"));
  assert_non_null(strstr(text, "(not identifiable)"));
  assert_non_null(strstr(text, "+0.950  joint.elbow.damping ~ joint.base_yaw.damping"));
  assert_non_null(strstr(text, "joint.base_yaw.damping (never moves)"));
  free(text);
}

TS_MAIN(test_club_arm, test_servo_gearbox, test_report_json)
