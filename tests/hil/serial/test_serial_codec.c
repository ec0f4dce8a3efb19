/* tests/hil/serial/test_serial_codec.c: the runtime ↔ protocol mapping (hil/serial_codec.c) and
 * the "transports.serial" configuration, without any port. */
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

#include "hil/error.h"
#include "hil/serial/serial_codec.h"
#include "hil/serial/serial_transport.h"
#include "sensors/sensors.h"
#include "sim/sim.h"
#include "support/model.h"
#include "support/skip.h"

#define ARM ACHILLES_SOURCE_DIR "/configs/club_arm.json"

typedef struct fixture {
  sim_model *m;
  sens_set *s;
} fixture;

static int setup(void **state) {
  static fixture f;
  char err[512];
  f.m = ts_model_file(ARM);
  *state = &f;
  if (sens_set_load_robot(&f.s, f.m, ARM, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sens_set_free(&f->s);
  sim_model_free(f->m);
  return 0;
}

/* ids run over sensors in set order and channels in channel order, one per channel */
static void test_table_is_flat_in_set_order(void **state) {
  fixture *f = *state;
  hil_serial_table t;
  hil_serial_table_build(&t, f->s);
  int expected = 0;
  for (int i = 0; i < sens_set_count(f->s); i++) {
    const sens_sensor *s = sens_set_sensor(f->s, i);
    assert_int_equal(t.first_id[i], expected);
    for (int c = 0; c < s->nch; c++) {
      assert_int_equal(t.id[expected + c].sensor, i);
      assert_int_equal(t.id[expected + c].channel, c);
      int counts = s->type == SENS_ENCODER && c == s->u.enc.ch_counts;
      assert_int_equal(t.id[expected + c].kind, counts ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    }
    expected += s->nch;
  }
  assert_int_equal(t.n, expected);
  assert_int_equal(t.nsensors, sens_set_count(f->s));
  assert_int_equal(t.omitted, 0);
  /* the shipped sensors: enc_base_yaw has counts, angle, velocity, index → ids 0..3 */
  assert_int_equal(sens_set_find(f->s, "enc_base_yaw"), 0);
  assert_int_equal(t.id[0].kind, ACH_KIND_COUNTS);
  assert_int_equal(t.first_id[1], sens_set_sensor(f->s, 0)->nch);
}

static void test_table_without_sensors_is_empty(void **state) {
  (void)state;
  hil_serial_table t;
  hil_serial_table_build(&t, NULL);
  assert_int_equal(t.n, 0);
  assert_int_equal(t.nsensors, 0);
}

/* a valid encoder sample: counts as int32, angle as float, age from the truth time */
static void test_sample_entries_values_and_age(void **state) {
  fixture *f = *state;
  hil_serial_table t;
  hil_serial_table_build(&t, f->s);
  const sens_sensor *enc = sens_set_sensor(f->s, 0);
  sens_sample smp = {.t = 1.25, .t_truth = 1.2495, .seq = 1250, .valid = 1};
  smp.meas[enc->u.enc.ch_counts] = -1234;
  smp.meas[enc->u.enc.ch_angle] = -0.9472;
  ach_sample e[SENS_MAX_CHANNELS];
  int n = hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &t, 0, enc, &smp, smp.t);
  assert_int_equal(n, enc->nch);
  for (int i = 0; i < n; i++) {
    assert_int_equal(e[i].sensor_id, i);
    assert_int_equal(e[i].flags, 0);
    assert_int_equal(e[i].sample_seq, 1250);
    assert_int_equal(e[i].age_ns, 500000); /* 0.5 ms of latency */
  }
  assert_int_equal(e[enc->u.enc.ch_counts].kind, ACH_KIND_COUNTS);
  assert_int_equal(e[enc->u.enc.ch_counts].v.counts, -1234);
  assert_int_equal(e[enc->u.enc.ch_angle].kind, ACH_KIND_VALUE);
  assert_true(e[enc->u.enc.ch_angle].v.value == (float)-0.9472);
  /* a max smaller than the channels cuts the list */
  assert_int_equal(hil_serial_sample_entries(e, 2, &t, 0, enc, &smp, smp.t), 2);
}

/* a dropped sample repeats the last good value, flagged; a dead sensor is flagged a fault */
static void test_invalid_samples_keep_last_good_value(void **state) {
  fixture *f = *state;
  hil_serial_table t;
  hil_serial_table_build(&t, f->s);
  sens_sensor enc = *sens_set_sensor(f->s, 0);
  sens_sample smp = {.valid = 1};
  smp.meas[enc.u.enc.ch_counts] = 77;
  smp.meas[enc.u.enc.ch_angle] = 0.5;
  ach_sample e[SENS_MAX_CHANNELS];
  hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &t, 0, &enc, &smp, 0);
  smp.valid = 0;
  smp.seq = 1;
  for (int c = 0; c < SENS_MAX_CHANNELS; c++) {
    smp.meas[c] = NAN;
  }
  hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &t, 0, &enc, &smp, 0);
  assert_int_equal(e[enc.u.enc.ch_counts].flags, ACH_SAMPLE_DROPPED);
  assert_int_equal(e[enc.u.enc.ch_counts].v.counts, 77);
  assert_true(e[enc.u.enc.ch_angle].v.value == 0.5f);
  enc.dead = 1;
  hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &t, 0, &enc, &smp, 0);
  assert_int_equal(e[enc.u.enc.ch_counts].flags, ACH_SAMPLE_FAULT);
  /* an unknown sensor index yields nothing */
  assert_int_equal(hil_serial_sample_entries(e, SENS_MAX_CHANNELS, &t, -1, &enc, &smp, 0), 0);
}

/* one actuator of each type: modes follow the type and the DC motor's input */
static void test_modes_follow_actuator_types(void **state) {
  (void)state;
  static const char *json =
      "{\"name\": \"modes\", \"timestep\": 0.001, \"bodies\": ["
      "{\"name\": \"a\", \"parent\": \"world\", \"joint\": {\"name\": \"j\", \"type\": \"hinge\","
      " \"axis\": [0, 0, 1]}, \"inertial\": {\"mass\": 1, \"com\": [0.1, 0, 0],"
      " \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0]}}],"
      "\"actuators\": ["
      "{\"name\": \"t\", \"joint\": \"j\", \"type\": \"motor\"},"
      "{\"name\": \"d\", \"joint\": \"j\", \"type\": \"dc_motor\", \"supply_voltage\": 12,"
      " \"resistance\": 2, \"kt\": 0.02},"
      "{\"name\": \"v\", \"joint\": \"j\", \"type\": \"dc_motor\", \"input\": \"voltage\","
      " \"supply_voltage\": 12, \"resistance\": 2, \"kt\": 0.02},"
      "{\"name\": \"p\", \"joint\": \"j\", \"type\": \"position_servo\", \"kp\": 10},"
      "{\"name\": \"w\", \"joint\": \"j\", \"type\": \"velocity_servo\", \"kv\": 1}]}";
  char err[512];
  sim_model *m = sim_model_load_string(json, "modes", err, sizeof err);
  assert_non_null(m);
  const ach_motor_mode expected[] = {ACH_MODE_TORQUE, ACH_MODE_DUTY, ACH_MODE_VOLTAGE,
                                     ACH_MODE_POSITION, ACH_MODE_VELOCITY};
  assert_int_equal(m->nu, 5);
  for (int i = 0; i < m->nu; i++) {
    assert_int_equal(hil_serial_actuator_mode(&m->actuators[i]), expected[i]);
    for (int mode = 0; mode <= ACH_MODE_VELOCITY; mode++) {
      ach_joint_command c = {.joint_id = (uint8_t)i, .mode = (uint8_t)mode, .value = 0.1f};
      assert_int_equal(hil_serial_check_command(m, &c),
                       mode == (int)expected[i] ? ACH_ERRC_NONE : ACH_ERRC_BAD_MODE);
    }
  }
  ach_joint_command bad = {.joint_id = 5, .mode = ACH_MODE_TORQUE, .value = 0};
  assert_int_equal(hil_serial_check_command(m, &bad), ACH_ERRC_BAD_JOINT);
  sim_model_free(m);
}

/* SENSOR_INFO of every kind of channel of the club arm, against configs/club_arm.json and
 * configs/club_arm.sensors.json as written: ids from the table printed at start, actuators in
 * the order base, shoulder, elbow, wrist */
static void test_sensor_info_from_the_config(void **state) {
  fixture *f = *state;
  hil_serial_table t;
  hil_serial_table_build(&t, f->s);
  typedef struct expect {
    int id;
    const char *name, *units;
    int kind, type, joint;
    uint32_t cpr;
    float rate;
  } expect;
  static const expect cases[] = {
      {0, "enc_base_yaw.counts", "count", ACH_KIND_COUNTS, ACH_SENSOR_ENCODER, 0, 8192, 1000},
      {1, "enc_base_yaw.angle", "rad", ACH_KIND_VALUE, ACH_SENSOR_ENCODER, 0, 8192, 1000},
      {2, "enc_base_yaw.velocity", "rad/s", ACH_KIND_VALUE, ACH_SENSOR_ENCODER, 0, 8192, 1000},
      {3, "enc_base_yaw.index", "1", ACH_KIND_VALUE, ACH_SENSOR_ENCODER, 0, 8192, 1000},
      {4, "enc_shoulder.counts", "count", ACH_KIND_COUNTS, ACH_SENSOR_ENCODER, 1, 16384, 1000},
      {10, "enc_wrist_roll.counts", "count", ACH_KIND_COUNTS, ACH_SENSOR_ENCODER, 3, 4096, 500},
      {12, "imu_wrist.gyro.x", "rad/s", ACH_KIND_VALUE, ACH_SENSOR_IMU, ACH_NO_JOINT, 0, 800},
      {17, "imu_wrist.accel.z", "m/s^2", ACH_KIND_VALUE, ACH_SENSOR_IMU, ACH_NO_JOINT, 0, 800},
      {18, "torque_shoulder.torque", "N*m", ACH_KIND_VALUE, ACH_SENSOR_TORQUE, 1, 0, 1000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const expect *e = &cases[i];
    ach_sensor_info in;
    assert_int_equal(hil_serial_sensor_info(&in, &t, f->s, f->m, e->id), 0);
    assert_int_equal(in.sensor_id, e->id);
    assert_string_equal(in.name, e->name);
    assert_string_equal(in.units, e->units);
    assert_int_equal(in.kind, e->kind);
    assert_int_equal(in.sensor_type, e->type);
    assert_int_equal(in.joint, e->joint);
    assert_int_equal(in.counts_per_rev, e->cpr);
    assert_true(in.rate_hz == e->rate);
  }
  ach_sensor_info in;
  assert_int_equal(hil_serial_sensor_info(&in, &t, f->s, f->m, t.n), -1);
  assert_int_equal(hil_serial_sensor_info(&in, &t, f->s, f->m, -1), -1);
}

static void test_time_ns(void **state) {
  (void)state;
  assert_int_equal(hil_serial_time_ns(0), 0);
  assert_int_equal(hil_serial_time_ns(-1), 0);
  assert_int_equal(hil_serial_time_ns(0.001), 1000000);
  assert_int_equal(hil_serial_time_ns(12345.000000001), 12345000000001ULL);
}

/* --- configuration ---------------------------------------------------------------------------- */

static char config_path[64];

/* writes a robot file whose "transports" section is `transports` (one link arm otherwise) */
static const char *write_config(const char *transports) {
  snprintf(config_path, sizeof config_path, "/tmp/achilles-serial-cfg-XXXXXX");
  int fd = mkstemp(config_path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"name\": \"x\", \"bodies\": [], \"transports\": %s}\n", transports);
  fclose(f);
  return config_path;
}

static int parse(const char *transports, hil_serial_options *o, int *present, char *err,
                 size_t err_sz) {
  hil_serial_options_default(o);
  int rc = hil_serial_options_parse(o, present, write_config(transports), err, err_sz);
  unlink(config_path);
  return rc;
}

static void test_options_defaults_and_device(void **state) {
  (void)state;
  hil_serial_options o;
  int present = -1;
  char err[512] = "";
  assert_int_equal(parse("{\"zmq\": {\"anything\": 1}}", &o, &present, err, sizeof err), HIL_OK);
  assert_int_equal(present, 0);
  assert_int_equal(o.use_pty, 1);
  assert_int_equal(o.baud, 1000000);
  assert_int_equal(o.data_bits, 8);
  assert_int_equal(o.parity, 'N');
  assert_int_equal(o.stop_bits, 1);
  assert_int_equal(o.flow, HIL_SERIAL_FLOW_NONE);
  assert_int_equal(parse("{\"zmq\": {}, \"serial\": {\"port\": \"/dev/ttyACM0\", \"baud\": 115200,"
                         " \"parity\": \"even\", \"stop_bits\": 2, \"data_bits\": 7,"
                         " \"flow_control\": \"rtscts\", \"reopen_interval_s\": 0.2}}",
                         &o, &present, err, sizeof err),
                   HIL_OK);
  assert_int_equal(present, 1);
  assert_int_equal(o.use_pty, 0);
  assert_string_equal(o.port, "/dev/ttyACM0");
  assert_int_equal(o.baud, 115200);
  assert_int_equal(o.parity, 'E');
  assert_int_equal(o.stop_bits, 2);
  assert_int_equal(o.data_bits, 7);
  assert_int_equal(o.flow, HIL_SERIAL_FLOW_RTSCTS);
  assert_true(o.reopen_interval_s == 0.2);
  assert_int_equal(parse("{\"serial\": {\"mode\": \"pty\", \"link\": \"/tmp/arm\"}}", &o, &present,
                         err, sizeof err),
                   HIL_OK);
  assert_int_equal(o.use_pty, 1);
  assert_string_equal(o.link, "/tmp/arm");
}

/* every mistake is refused with the JSON path of the offending key */
static void test_options_errors_name_the_path(void **state) {
  (void)state;
  static const struct {
    const char *json, *path;
  } cases[] = {
      {"{\"serial\": {\"bauds\": 9600}}", "transports.serial.bauds"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"baud\": 0}}", "transports.serial.baud"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"baud\": 9600.5}}", "transports.serial.baud"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"data_bits\": 9}}",
       "transports.serial.data_bits"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"parity\": \"mark\"}}",
       "transports.serial.parity"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"stop_bits\": 3}}",
       "transports.serial.stop_bits"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"flow_control\": \"dtrdsr\"}}",
       "transports.serial.flow_control"},
      {"{\"serial\": {\"mode\": \"device\"}}", "transports.serial.port"},
      {"{\"serial\": {\"mode\": \"pty\", \"port\": \"/dev/ttyUSB0\"}}", "transports.serial.port"},
      {"{\"serial\": {\"port\": \"/dev/ttyUSB0\", \"link\": \"/tmp/x\"}}",
       "transports.serial.link"},
      {"{\"serial\": {\"reopen_interval_s\": 0}}", "transports.serial.reopen_interval_s"},
      {"{\"serial\": {\"port\": \"\"}}", "transports.serial.port"},
      {"{\"serial\": 3}", "transports.serial"},
      {"[]", "transports"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hil_serial_options o;
    int present;
    char err[512] = "";
    assert_int_equal(parse(cases[i].json, &o, &present, err, sizeof err), HIL_ECONFIG);
    if (!strstr(err, cases[i].path)) {
      fail_msg("%s: message \"%s\" does not name %s", cases[i].json, err, cases[i].path);
    }
  }
}

TS_MAIN_WITH(setup, teardown, test_table_is_flat_in_set_order, test_table_without_sensors_is_empty,
                              test_sample_entries_values_and_age,
                              test_invalid_samples_keep_last_good_value,
                              test_modes_follow_actuator_types, test_sensor_info_from_the_config,
                              test_time_ns, test_options_defaults_and_device,
                              test_options_errors_name_the_path)
