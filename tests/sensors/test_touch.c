/* tests/sensors/test_touch.c: the touch (contact force) sensor.
 *
 * Against closed forms: a resting sphere's pad reads its weight m·g, along +z in its axes; a
 * box resting on a fixed sphere makes that sphere (the contact's first geom) feel m·g downward;
 * a geom out of contact reads 0; white noise on the chain has the configured σ around the
 * truth. Against MuJoCo 2.2.2: the summed normal force and the 3D force on each of the two geoms
 * equal MuJoCo's contact forces (mj_contactForce, converged solvers) at 200 random contact
 * states of a box on a carriage above a tilted plane. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sensors/sensors.h"
#include "support/model.h"
#include "support/mujoco.h"
#include "support/numbers.h"
#include "support/skip.h"
#if ACHILLES_HAVE_MUJOCO
#include "mjcf_writer.h"
#endif


static sens_set *load_sensors(const sim_model *m, const char *list) {
  char json[2048], err[512];
  snprintf(json, sizeof json, "{\"seed\": 5, \"list\": [%s]}", list);
  cJSON *block = cJSON_Parse(json);
  sens_set *set = NULL;
  const int rc = sens_set_load_json(&set, m, block, "test", err, sizeof err);
  cJSON_Delete(block);
  if (rc != 0) {
    fail_msg("%s", err);
  }
  return set;
}

/* a 2 kg sphere of radius 0.1 on a vertical slide above the ground, and a far-away idle one */
static const char resting_json[] =
    "{ \"name\": \"resting\", \"timestep\": 0.001,"
    "  \"bodies\": [ {\"name\": \"ball\", \"parent\": \"world\", \"pos\": [0, 0, 0.1],"
    "    \"joint\": {\"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1], \"damping\": 20},"
    "    \"inertial\": {\"mass\": 2, \"inertia\": [0.008, 0.008, 0.008, 0, 0, 0]}},"
    "   {\"name\": \"idle\", \"parent\": \"world\", \"pos\": [3, 0, 1],"
    "    \"joint\": {\"name\": \"s\", \"type\": \"slide\", \"axis\": [1, 0, 0]},"
    "    \"inertial\": {\"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}} ],"
    "  \"geoms\": [ {\"name\": \"ground\", \"body\": \"world\", \"type\": \"plane\"},"
    "    {\"name\": \"pad\", \"body\": \"ball\", \"type\": \"sphere\", \"size\": [0.1]},"
    "    {\"name\": \"far\", \"body\": \"idle\", \"type\": \"sphere\", \"size\": [0.1]} ] }";

/* a 2 kg cylinder (the pad) on a vertical slide, resting on its rim */
static const char can_json[] =
    "{ \"name\": \"can\", \"timestep\": 0.001,"
    "  \"bodies\": [ {\"name\": \"can\", \"parent\": \"world\", \"pos\": [0, 0, 0.05],"
    "    \"joint\": {\"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1], \"damping\": 20},"
    "    \"inertial\": {\"mass\": 2, \"inertia\": [0.008, 0.008, 0.008, 0, 0, 0]}} ],"
    "  \"geoms\": [ {\"name\": \"ground\", \"body\": \"world\", \"type\": \"plane\"},"
    "    {\"name\": \"pad\", \"body\": \"can\", \"type\": \"cylinder\", \"size\": [0.1, 0.05]} ] }";

/* a 1.5 kg box on a vertical slide above a sphere fixed to the world */
static const char stack_json[] =
    "{ \"name\": \"stack\", \"timestep\": 0.001,"
    "  \"bodies\": [ {\"name\": \"crate\", \"parent\": \"world\", \"pos\": [0, 0, 0.35],"
    "    \"joint\": {\"name\": \"z\", \"type\": \"slide\", \"axis\": [0, 0, 1], \"damping\": 20},"
    "    \"inertial\": {\"mass\": 1.5, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}} ],"
    "  \"geoms\": [ {\"name\": \"knob\", \"body\": \"world\", \"type\": \"sphere\","
    "    \"size\": [0.2], \"pos\": [0.05, 0, 0]},"
    "    {\"name\": \"crate\", \"body\": \"crate\", \"type\": \"box\", \"size\": [0.2, 0.2, 0.15]} ] }";

/* settles (damped) for 3 s; returns the last published sample of sensor i */
static void settle(const sim_model *m, sim_data *d, sens_set *set) {
  for (int k = 0; k < 3000; k++) {
    sim_step(m, d);
    sim_forward(m, d);
    sens_set_update(set, m, d);
  }
}

/* a robot and its touch sensors: the model, a data at its start, the sensors */
typedef struct scene {
  sim_model *m;
  sim_data *d;
  sens_set *set;
} scene;

static scene scene_of(const char *robot, const char *sensors) {
  scene sc;
  sc.m = ts_model(robot);
  sc.d = sim_data_new(sc.m);
  sc.set = load_sensors(sc.m, sensors);
  return sc;
}

static void scene_free(scene *sc) {
  sens_set_free(&sc->set);
  ts_sim_free(sc->m, sc->d);
}

static void test_resting_weight(void **state) {
  (void)state;
  scene sc = scene_of(resting_json, "{\"name\": \"pad\", \"type\": \"touch\", \"geom\": \"pad\","
                             " \"force\": true},"
                             "{\"name\": \"ground\", \"type\": \"touch\", \"geom\": \"ground\"},"
                             "{\"name\": \"far\", \"type\": \"touch\", \"geom\": \"far\"}");
  const sens_sensor *pad = sens_set_sensor(sc.set, 0), *ground = sens_set_sensor(sc.set, 1),
                    *far = sens_set_sensor(sc.set, 2);
  assert_int_equal(pad->nch, 4);
  assert_string_equal(pad->channel[0], "normal");
  assert_string_equal(pad->channel[3], "force.z");
  assert_int_equal(ground->nch, 1);
  settle(sc.m, sc.d, sc.set);
  const double weight = 2 * 9.81;
  print_message("resting 2 kg sphere: pad normal %.9g N, force.z %.9g N, ground %.9g N "
                "(m·g = %.9g N), %d contact(s)\n", pad->sample.meas[0], pad->sample.meas[3],
                ground->sample.meas[0], weight, sc.d->ncon);
  assert_int_equal(sc.d->ncon, 1);
  assert_true(fabs(pad->sample.meas[0] - weight) <= 1e-6 * weight);
  assert_true(fabs(pad->sample.meas[3] - weight) <= 1e-6 * weight);
  assert_true(fabs(pad->sample.meas[1]) <= 1e-9 && fabs(pad->sample.meas[2]) <= 1e-9);
  assert_true(ground->sample.meas[0] == pad->sample.meas[0]);
  assert_true(far->sample.valid && far->sample.meas[0] == 0);
  /* lifted off the ground: nothing */
  sc.d->qpos[0] = 0.5;
  sc.d->qvel[0] = 0;
  sim_forward(sc.m, sc.d);
  sc.d->nstep++;
  sc.d->time += sc.m->opt.timestep;
  assert_true(sens_set_update(sc.set, sc.m, sc.d) > 0);
  assert_true(pad->sample.meas[0] == 0 && pad->sample.meas[3] == 0);
  scene_free(&sc);
}

/* The sensor knows no shapes: a cylinder pad (three contacts on its rim) reads the weight too. */
static void test_cylinder_pad_weight(void **state) {
  (void)state;
  scene sc = scene_of(can_json, "{\"name\": \"pad\", \"type\": \"touch\", \"geom\": \"pad\"}");
  settle(sc.m, sc.d, sc.set);
  const double weight = 2 * 9.81, got = sens_set_sensor(sc.set, 0)->sample.meas[0];
  print_message("resting 2 kg cylinder: pad normal %.9g N (m·g = %.9g N), %d contacts\n", got,
                weight, sc.d->ncon);
  assert_int_equal(sc.d->ncon, 3);
  assert_true(fabs(got - weight) <= 1e-6 * weight);
  scene_free(&sc);
}

/* A 1.5 kg box on a vertical slide resting on a sphere fixed to the world: sphere–box contacts
 * list the sphere first, so the sphere is the contact's geom 1 and feels the opposite force. */
static void test_first_geom_feels_the_reaction(void **state) {
  (void)state;
  scene sc = scene_of(stack_json, "{\"name\": \"knob\", \"type\": \"touch\", \"geom\": \"knob\","
                             " \"force\": true},"
                             "{\"name\": \"crate\", \"type\": \"touch\", \"geom\": \"crate\","
                             " \"force\": true}");
  settle(sc.m, sc.d, sc.set);
  const sens_sensor *knob = sens_set_sensor(sc.set, 0), *crate = sens_set_sensor(sc.set, 1);
  const double weight = 1.5 * 9.81;
  print_message("box on a fixed sphere: knob normal %.9g N, force.z %.9g N; crate force.z %.9g N "
                "(m·g = %.9g N)\n", knob->sample.meas[0], knob->sample.meas[3],
                crate->sample.meas[3], weight);
  assert_int_equal(sc.d->ncon, 1);
  assert_int_equal(sc.d->con_geom[0], 0); /* the sphere is the contact's first geom */
  assert_true(fabs(knob->sample.meas[0] - weight) <= 1e-6 * weight);
  assert_true(fabs(knob->sample.meas[3] + weight) <= 1e-6 * weight);
  assert_true(fabs(crate->sample.meas[3] - weight) <= 1e-6 * weight);
  scene_free(&sc);
}

/* the usual chain: white noise of σ = 0.2 N around the true force, per sample */
static void test_noise_chain(void **state) {
  (void)state;
  scene sc = scene_of(resting_json, "{\"name\": \"pad\", \"type\": \"touch\", \"geom\": \"pad\","
                             " \"noise\": {\"white\": {\"sigma\": 0.2}}}");
  const sens_sensor *pad = sens_set_sensor(sc.set, 0);
  settle(sc.m, sc.d, sc.set);
  double sum = 0, sum2 = 0;
  const int n = 4000;
  for (int k = 0; k < n; k++) {
    sim_step(sc.m, sc.d);
    sim_forward(sc.m, sc.d);
    assert_int_equal(sens_set_update(sc.set, sc.m, sc.d), 1);
    const double e = pad->sample.meas[0] - pad->sample.truth[0];
    sum += e;
    sum2 += e * e;
  }
  const double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
  print_message("white noise σ 0.2 N: measured mean %.4f N, σ %.4f N over %d samples\n", mean, sd,
                n);
  assert_true(fabs(mean) < 4 * 0.2 / sqrt(n));
  assert_true(fabs(sd - 0.2) < 0.02);
  scene_free(&sc);
}

static void test_bad_touch_sensors(void **state) {
  (void)state;
  sim_model *m = ts_model(resting_json);
  static const char *const bad[][2] = {
      {"{\"name\": \"t\", \"type\": \"touch\"}", "list[0].geom: required"},
      {"{\"name\": \"t\", \"type\": \"touch\", \"geom\": \"nope\"}", "no geom named \"nope\""},
      {"{\"name\": \"t\", \"type\": \"touch\", \"geom\": \"pad\", \"force\": 1}", "list[0].force"},
      {"{\"name\": \"t\", \"type\": \"touch\", \"geom\": \"pad\", \"joint\": \"z\"}", "joint"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char json[512], err[512] = "";
    snprintf(json, sizeof json, "{\"list\": [%s]}", bad[k][0]);
    cJSON *block = cJSON_Parse(json);
    sens_set *set = NULL;
    assert_true(sens_set_load_json(&set, m, block, "test", err, sizeof err) != 0);
    cJSON_Delete(block);
    if (!strstr(err, bad[k][1])) {
      fail_msg("'%s' lacks '%s'", err, bad[k][1]);
    }
  }
  sim_model_free(m);
}

#if ACHILLES_HAVE_MUJOCO

/* a box on a carriage (slides x, y, z, a hinge about y) above a plane tilted by 0.2 rad */
static const char carriage_json[] =
    "{ \"name\": \"carriage\", \"timestep\": 0.002, \"solver_iterations\": 1000,"
    "  \"solver_tolerance\": 1e-15,"
    "  \"geoms\": [ {\"name\": \"floor\", \"body\": \"world\", \"type\": \"plane\","
    "     \"pos\": [0, 0, -0.05], \"quat\": [0.9950041652780258, 0.09983341664682815, 0, 0],"
    "     \"friction\": [0.8, 0.005, 0.0001]},"
    "    {\"name\": \"pad\", \"body\": \"holder\", \"type\": \"box\", \"size\": [0.1, 0.08, 0.06],"
    "     \"quat\": [0.9800665778412416, 0, 0, 0.19866933079506122]} ],"
    "  \"bodies\": ["
    "  {\"name\": \"cx\", \"parent\": \"world\", \"joint\": {\"name\": \"x\", \"type\": \"slide\","
    "    \"axis\": [1, 0, 0]}, \"inertial\": {\"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}},"
    "  {\"name\": \"cy\", \"parent\": \"cx\", \"joint\": {\"name\": \"y\", \"type\": \"slide\","
    "    \"axis\": [0, 1, 0]}, \"inertial\": {\"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}},"
    "  {\"name\": \"cz\", \"parent\": \"cy\", \"joint\": {\"name\": \"z\", \"type\": \"slide\","
    "    \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 0.3, \"inertia\": [1e-4, 1e-4, 1e-4, 0, 0, 0]}},"
    "  {\"name\": \"holder\", \"parent\": \"cz\", \"joint\": {\"name\": \"roll\", \"type\": \"hinge\","
    "    \"axis\": [0, 1, 0]}, \"inertial\": {\"mass\": 1.0, \"inertia\": [0.004, 0.004, 0.004, 0, 0, 0]}} ] }";

/* MuJoCo's contact forces on geom g: summed normal, and the total force in g's axes */
static void mujoco_touch(const mjModel *mm, mjData *md, int g, double *normal, double f3[3]) {
  double world[3] = {0, 0, 0};
  *normal = 0;
  for (int c = 0; c < md->ncon; c++) {
    const mjContact *con = &md->contact[c];
    if (con->geom1 != g && con->geom2 != g) {
      continue;
    }
    double f[6];
    mj_contactForce(mm, md, c, f);
    *normal += f[0];
    const double sign = con->geom2 == g ? 1 : -1;
    for (int k = 0; k < 3; k++) {
      world[k] += sign * (f[0] * con->frame[k] + f[1] * con->frame[3 + k] +
                          f[2] * con->frame[6 + k]);
    }
  }
  const double *R = md->geom_xmat + 9 * g;
  for (int k = 0; k < 3; k++) {
    f3[k] = R[k] * world[0] + R[3 + k] * world[1] + R[6 + k] * world[2];
  }
}

static void test_against_mujoco(void **state) {
  (void)state;
  TS_REQUIRE_MUJOCO();
  sim_model *m = ts_model(carriage_json);
  mjModel *mm = ts_mj_compile(m);
  mjData *md = mj_makeData(mm);
  sim_data *d = sim_data_new(m);
  sens_set *set = load_sensors(m, "{\"name\": \"pad\", \"type\": \"touch\", \"geom\": \"pad\","
                                  " \"force\": true},"
                                  "{\"name\": \"floor\", \"type\": \"touch\", \"geom\": \"floor\","
                                  " \"force\": true}");
  uint64_t s = 0x5eed7a11c0ffeeull;
  int n = 0, ncon = 0;
  double err_rel = 0;
  for (int k = 0; k < 1000 && n < 200; k++) {
    const double y = ts_uniform(&s, -0.3, 0.3);
    const double q[4] = {ts_uniform(&s, -0.3, 0.3), y, -0.05 + tan(0.2) * y + ts_uniform(&s, 0.02, 0.13),
                         ts_uniform(&s, -0.6, 0.6)};
    for (int i = 0; i < 4; i++) {
      d->qpos[i] = md->qpos[i] = q[i];
      d->qvel[i] = md->qvel[i] = ts_uniform(&s, -1, 1);
      d->qfrc_applied[i] = md->qfrc_applied[i] = ts_uniform(&s, -2, 2);
    }
    sim_forward(m, d);
    mj_forward(mm, md);
    if (d->ncon == 0) {
      continue;
    }
    assert_int_equal(d->ncon, md->ncon);
    d->nstep = n;
    d->time = n * m->opt.timestep;
    assert_int_equal(sens_set_update(set, m, d), 2);
    for (int g = 0; g < 2; g++) {
      const sens_sensor *sn = sens_set_sensor(set, g == 0 ? 0 : 1);
      const int mg = mj_name2id(mm, mjOBJ_GEOM, g == 0 ? "pad" : "floor");
      double normal, f3[3];
      mujoco_touch(mm, md, mg, &normal, f3);
      const double scale = fmax(1, fabs(normal));
      err_rel = fmax(err_rel, fabs(sn->sample.meas[0] - normal) / scale);
      for (int i = 0; i < 3; i++) {
        err_rel = fmax(err_rel, fabs(sn->sample.meas[1 + i] - f3[i]) / scale);
      }
    }
    ncon += d->ncon;
    n++;
  }
  print_message("touch vs MuJoCo: %d contact states (%d contacts), max relative error %.2g\n", n,
                ncon, err_rel);
  assert_int_equal(n, 200);
  assert_true(err_rel <= 1e-6);
  sens_set_free(&set);
  sim_data_free(d);
  ts_mj_free(mm, md);
  sim_model_free(m);
}

#else

TS_TEST(test_against_mujoco, TS_REQUIRE_MUJOCO())

#endif

TS_MAIN(test_resting_weight, test_cylinder_pad_weight, test_first_geom_feels_the_reaction,
        test_noise_chain, test_bad_touch_sensors, test_against_mujoco)
