/* tests/hil/servo/test_servo_record.c: the bus's servo records in a --record log
 * (hil/servo/servo_watch.h, docs/logs.md): every control-table field that changes what a servo
 * does is recorded at the physics step whose loop took it.
 *
 * The runtime is stepped by hand (hil_runtime_tick), a controller from the manuals writes over
 * the pty and waits for the servo's answer (the write is in the table), then the test steps: the
 * write must be in the record of exactly that step. The proof that the step is the loop's own:
 * hil/servo's dxl_servo_step run again from the log alone — the recorded fields applied at their
 * steps, the encoder samples as feedback, the samples' true velocity for the back-EMF — gives the
 * torques the servos applied (the api command records) bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/record/log.h"
#include "hil/servo/servo_model.h"
#include "hil/servo/servo_watch.h"
#include "servo_client.h"
#include "support/skip.h"
#include "support/tmp.h"

#define NS 4
#define MAX_STEPS 64

static const char *const act_name[NS] = {"base_servo", "shoulder_servo", "elbow_servo",
                                         "wrist_servo"};
static const char *const enc_name[NS] = {"enc_base_yaw", "enc_shoulder", "enc_elbow",
                                         "enc_wrist_roll"};

/* what the log says about one servo at one step */
typedef struct step_rec {
  int nfield;
  char field[HIL_LOG_MAX_REGISTERS][HIL_LOG_REGISTER_NAME_MAX];
  uint32_t value[HIL_LOG_MAX_REGISTERS];
  double angle, velocity, torque; /* encoder sample (measured angle, true velocity), api torque */
  int have_sample, have_torque;
} step_rec;

typedef struct log_view {
  step_rec s[MAX_STEPS][NS];
  int records;     /* servo records */
  uint64_t last;   /* highest step seen */
  int id[NS];      /* the IDs the records carry */
} log_view;

static int servo_of(const char *const *names, const char *name) {
  for (int i = 0; i < NS; i++) {
    if (strcmp(names[i], name) == 0) {
      return i;
    }
  }
  return -1;
}

/* the log's servo records, encoder samples and api commands, by step (1 kHz: step = t·1000) */
static void read_view(const char *path, log_view *v) {
  char err[512];
  memset(v, 0, sizeof *v);
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  if (!r) {
    fail_msg("%s", err);
  }
  hil_log_record *rec = malloc(sizeof *rec);
  assert_non_null(rec);
  int k;
  while ((k = hil_log_next(r, rec, err, sizeof err)) != 0) {
    if (k < 0) {
      fail_msg("%s", err);
    }
    const long step = lround(rec->t * 1000);
    if (step < 0 || step >= MAX_STEPS) {
      continue;
    }
    if (rec->type == HIL_LOG_SERVO) {
      const int i = servo_of(act_name, rec->actuator);
      assert_true(i >= 0);
      assert_true(rec->step == (uint64_t)step); /* the step and the time agree */
      step_rec *s = &v->s[step][i];
      assert_int_equal(s->nfield, 0); /* one record per servo and step */
      s->nfield = rec->nreg;
      memcpy(s->field, rec->reg_name, sizeof s->field);
      memcpy(s->value, rec->reg_value, sizeof s->value);
      v->id[i] = rec->servo_id;
      v->records++;
      v->last = rec->step > v->last ? rec->step : v->last;
    } else if (rec->type == HIL_LOG_SAMPLE && servo_of(enc_name, rec->sensor) >= 0) {
      step_rec *s = &v->s[step][servo_of(enc_name, rec->sensor)];
      s->angle = rec->value[0], s->velocity = rec->truth[1], s->have_sample = 1;
    } else if (rec->type == HIL_LOG_COMMAND && strcmp(rec->source, "api") == 0) {
      step_rec *s = &v->s[step][servo_of(act_name, rec->actuator)];
      s->torque = rec->command, s->have_torque = 1;
    }
  }
  free(rec);
  hil_log_reader_close(&r);
}

/* the value of a field in servo i's record of a step, or -1 when the record has none */
static long long field_at(const log_view *v, long step, int i, const char *name) {
  const step_rec *s = &v->s[step][i];
  for (int k = 0; k < s->nfield; k++) {
    if (strcmp(s->field[k], name) == 0) {
      return s->value[k];
    }
  }
  return -1;
}

static void start_recording(fixture *f, const char *config, char *path, size_t path_sz) {
  start_with(f, config, 1000000, 0); /* stepped here, by hand */
  ts_tmp_path(path, path_sz, "servo.ndjson");
  char err[512];
  if (hil_runtime_record(f->rt, path, err, sizeof err) != HIL_OK) {
    fail_msg("%s", err);
  }
}

static void ticks(fixture *f, int n) {
  for (int k = 0; k < n; k++) {
    hil_runtime_tick(f->rt);
  }
}

static void test_dxl_writes_at_their_step(void **state) {
  (void)state;
  fixture f;
  char path[300];
  start_recording(&f, ACHILLES_SOURCE_DIR "/configs/servo_arm.json", path, sizeof path);
  ticks(&f, 3);
  assert_int_equal(write_field(&f.c, 3, DXL_TORQUE_ENABLE, 1, 1), 0);
  ticks(&f, 1);
  const long on = (long)hil_runtime_steps(f.rt); /* the step whose loop took torque on */
  assert_int_equal(write_field(&f.c, 3, DXL_GOAL_POSITION, 2300, 4), 0);
  assert_int_equal(write_field(&f.c, 3, DXL_PROFILE_VELOCITY, 50, 4), 0);
  ticks(&f, 1);
  const long goal = (long)hil_runtime_steps(f.rt);
  ticks(&f, 5);
  assert_int_equal(write_field(&f.c, 3, DXL_GOAL_POSITION, 2300, 4), 0); /* no change */
  ticks(&f, 5);
  assert_int_equal(write_field(&f.c, 3, DXL_GOAL_POSITION, 1900, 4), 0);
  ticks(&f, 1);
  const long back = (long)hil_runtime_steps(f.rt);
  ticks(&f, 10);
  stop(&f); /* closes the log */
  log_view *v = calloc(1, sizeof *v);
  assert_non_null(v);
  read_view(path, v);
  /* the first record of each servo lists every field the model has, as its loop took them */
  int n;
  servo_watch_fields(SERVO_WATCH_DXL, &n);
  long first = -1;
  for (long k = 0; k < MAX_STEPS && first < 0; k++) {
    first = v->s[k][0].nfield ? k : -1;
  }
  assert_true(first >= 0 && first <= 1);
  assert_int_equal(v->s[first][0].nfield, n - 2); /* XL430: no current limit, no goal current */
  assert_int_equal(v->s[first][1].nfield, n);
  assert_int_equal(field_at(v, first, 2, "goal_position"), 2048); /* power-on: where it stands */
  assert_int_equal(field_at(v, first, 2, "torque_enable"), 0);
  assert_int_equal(field_at(v, first, 1, "position_p_gain"), 800);
  /* then each write at the step that took it, alone */
  assert_int_equal(v->s[on][2].nfield, 1);
  assert_int_equal(field_at(v, on, 2, "torque_enable"), 1);
  assert_int_equal(v->s[goal][2].nfield, 2);
  assert_int_equal(field_at(v, goal, 2, "goal_position"), 2300);
  assert_int_equal(field_at(v, goal, 2, "profile_velocity"), 50);
  assert_int_equal(v->s[back][2].nfield, 1);
  assert_int_equal(field_at(v, back, 2, "goal_position"), 1900);
  assert_int_equal(v->records, 4 + 3); /* the rewrite of the same goal changed nothing */
  assert_int_equal(v->id[0], 1);
  assert_int_equal(v->id[2], 3);
  free(v);
}

/* the servos' loops again from the log alone: the torques they applied, bit for bit */
static void test_loop_again_from_the_log(void **state) {
  (void)state;
  fixture f;
  char path[300];
  start_recording(&f, ACHILLES_SOURCE_DIR "/configs/servo_arm.json", path, sizeof path);
  ticks(&f, 2);
  for (uint8_t id = 1; id <= NS; id++) {
    assert_int_equal(write_field(&f.c, id, DXL_TORQUE_ENABLE, 1, 1), 0);
  }
  for (int k = 0; k < 6; k++) {
    ticks(&f, 3 + k);
    for (uint8_t id = 1; id <= NS; id++) {
      assert_int_equal(write_field(&f.c, id, DXL_GOAL_POSITION, 2048 + 40 * (k % 3) - 30 * id, 4),
                       0);
    }
  }
  ticks(&f, 60 - (int)hil_runtime_steps(f.rt));
  stop(&f);
  log_view *v = calloc(1, sizeof *v);
  assert_non_null(v);
  read_view(path, v);
  static const int model[NS] = {DXL_MODEL_XL430_W250, DXL_MODEL_XM430_W350,
                                DXL_MODEL_XM430_W350, DXL_MODEL_XL430_W250};
  dxl_device dev[NS];
  servo_state st[NS];
  servo_motor mot[NS];
  for (int i = 0; i < NS; i++) {
    assert_int_equal(dxl_device_init(&dev[i], (dxl_model)model[i], (uint8_t)(i + 1)), 0);
    assert_int_equal(servo_motor_of_model(&mot[i], model[i]), 0);
    memset(&st[i], 0, sizeof st[i]);
  }
  int compared = 0, moving = 0;
  for (int k = 0; k < MAX_STEPS; k++) {
    for (int i = 0; i < NS; i++) {
      const step_rec *s = &v->s[k][i];
      if (!s->have_torque) {
        continue;
      }
      assert_true(s->have_sample);
      for (int j = 0; j < s->nfield; j++) { /* the fields this step took */
        const servo_watch_field *fd = servo_watch_find(SERVO_WATCH_DXL, s->field[j]);
        assert_non_null(fd);
        dxl_device_set(&dev[i], fd->address, fd->size, s->value[j]);
      }
      const servo_feedback fb = {s->angle, s->velocity};
      const double tau = dxl_servo_step(&dev[i], &st[i], &mot[i], &fb, 0.001);
      if (tau != s->torque) {
        fail_msg("step %d, %s: the loop again gives %.17g N·m, the log %.17g", k, act_name[i],
                 tau, s->torque);
      }
      compared++;
      moving += fabs(tau) > 0.05;
    }
  }
  printf("%d torques compared (%d above 0.05 N·m), all equal\n", compared, moving);
  assert_true(compared >= 50 * NS);
  assert_true(moving >= 20); /* the goals did move the servos */
  free(v);
}

/* the Feetech bus: the STS's own fields, under their names */
static void test_sts_writes_at_their_step(void **state) {
  (void)state;
  fixture f;
  char path[300];
  start_recording(&f, ACHILLES_SOURCE_DIR "/configs/servo_arm_sts.json", path, sizeof path);
  ticks(&f, 2);
  ft_write(&f.c, 2, FT_TORQUE_ENABLE, 1, 1);
  ft_write(&f.c, 2, FT_GOAL_POSITION, 2200, 2);
  ticks(&f, 1);
  const long at = (long)hil_runtime_steps(f.rt);
  ticks(&f, 3);
  stop(&f);
  log_view *v = calloc(1, sizeof *v);
  assert_non_null(v);
  read_view(path, v);
  int n;
  servo_watch_fields(SERVO_WATCH_STS, &n);
  long first = -1;
  for (long k = 0; k < MAX_STEPS && first < 0; k++) {
    first = v->s[k][1].nfield ? k : -1;
  }
  assert_true(first >= 0);
  assert_int_equal(v->s[first][1].nfield, n);
  assert_true(field_at(v, first, 1, "p_gain") >= 0);
  assert_int_equal(v->s[at][1].nfield, 2);
  assert_int_equal(field_at(v, at, 1, "torque_enable"), 1);
  assert_int_equal(field_at(v, at, 1, "goal_position"), 2200);
  assert_int_equal(v->records, 4 + 1);
  free(v);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_dxl_writes_at_their_step,
             test_loop_again_from_the_log, test_sts_writes_at_their_step)
