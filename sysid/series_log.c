/* sysid/series_log.c: an Achilles log (`achilles run --record`, docs/logs.md) as a series: the
 * encoder samples as joint readings, the command records as the inputs held between them
 * (series.h, docs/sysid.md section 2). */
#include "sysid/series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"
#include "sensors/quantize.h"

#define TWO_PI 6.283185307179586

/* an encoder of the sensors file that the log holds, read as one series joint */
typedef struct log_joint {
  char sensor[HIL_LOG_NAME_MAX];
  int channel;       /* index in the record's channels */
  double factor;     /* counts → rad (the encoder's step), or 1 for the angle channel */
  int wrap;          /* the angle channel wraps to [-π, π): unwind it */
  double prev;       /* the last reading, for unwinding (NAN before the first) */
} log_joint;

typedef struct log_reader {
  const char *path;
  const sim_model *m;
  sysid_series *s;
  log_joint *lj;     /* s->njoint */
  int *act_of;       /* header actuator k → model actuator index */
  double *q, *u;     /* the row being filled, the inputs held */
  double row_t;
  int row_open, cap;
} log_reader;

static int add_name(char ***names, int *n, const char *name) {
  char **nn = realloc(*names, (size_t)(*n + 1) * sizeof *nn);
  if (!nn) {
    return -1;
  }
  *names = nn;
  nn[*n] = malloc(strlen(name) + 1);
  if (!nn[*n]) {
    return -1;
  }
  strcpy(nn[(*n)++], name);
  return 0;
}

static int header_channel(const hil_log_sensor_info *info, const char *channel) {
  for (int c = 0; c < info->nch; c++) {
    if (strcmp(info->channel[c], channel) == 0) {
      return c;
    }
  }
  return -1;
}

/* one series joint per joint that an encoder of `set` in the log's header reads (the first such
 * encoder, when several read it) */
static int plan_joints(log_reader *lr, const hil_log_header *h, const sens_set *set, char *err,
                       size_t err_sz) {
  sysid_series *s = lr->s;
  lr->lj = calloc((size_t)h->nsensors + 1, sizeof *lr->lj);
  if (!lr->lj) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int i = 0; i < h->nsensors; i++) {
    const int k = sens_set_find(set, h->sensor[i].name);
    const sens_sensor *e = k >= 0 ? sens_set_sensor(set, k) : NULL;
    if (!e || e->type != SENS_ENCODER) {
      continue;
    }
    const char *joint = lr->m->joints[e->u.enc.joint].name;
    int dup = 0;
    for (int j = 0; j < s->njoint; j++) {
      dup |= strcmp(s->joint_name[j], joint) == 0;
    }
    const int ch_angle = header_channel(&h->sensor[i], "angle");
    const int ch_counts = header_channel(&h->sensor[i], "counts");
    if (dup || (ch_angle < 0 && ch_counts < 0)) {
      continue;
    }
    if (e->u.enc.incremental) {
      snprintf(err, err_sz, "%s: record 1: encoder \"%s\" is incremental (it reads 0 wherever the "
               "joint stood at power-up): the fit needs readings from a known zero; record with "
               "an absolute encoder (docs/sensors.md) or a homed CSV", lr->path, e->name);
      return -1;
    }
    log_joint *l = &lr->lj[s->njoint];
    snprintf(l->sensor, sizeof l->sensor, "%s", e->name);
    l->channel = ch_angle >= 0 ? ch_angle : ch_counts;
    l->factor = ch_angle >= 0 ? 1.0 : e->u.enc.step;
    l->wrap = ch_angle >= 0 && e->u.enc.wrap;
    l->prev = NAN;
    if (add_name(&s->joint_name, &s->njoint, joint) != 0) {
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
  }
  if (s->njoint == 0) {
    char list[512] = "";
    for (int i = 0; i < h->nsensors; i++) {
      const size_t used = strlen(list);
      snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", h->sensor[i].name);
    }
    snprintf(err, err_sz, "%s: record 1: none of the log's sensors (%s) is an encoder with an "
             "angle or counts channel in the sensors file given: is it the file that recorded "
             "the run (--sensors)?", lr->path, h->nsensors ? list : "none");
    return -1;
  }
  return 0;
}

/* the header's actuators, each one of the model's */
static int plan_actuators(log_reader *lr, const hil_log_header *h, char *err, size_t err_sz) {
  lr->act_of = calloc((size_t)h->nactuators + 1, sizeof *lr->act_of);
  if (!lr->act_of) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int k = 0; k < h->nactuators; k++) {
    lr->act_of[k] = sim_model_actuator(lr->m, h->actuator[k]);
    if (lr->act_of[k] < 0) {
      snprintf(err, err_sz, "%s: record 1: the log's actuator \"%s\" is not an actuator of %s "
               "(a log of another robot? the log's robot is \"%s\")", lr->path, h->actuator[k],
               lr->m->name, h->robot);
      return -1;
    }
    if (add_name(&lr->s->act_name, &lr->s->nact, h->actuator[k]) != 0) {
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
  }
  return 0;
}

static int push_row(log_reader *lr, char *err, size_t err_sz) {
  if (lr->row_open && sysid_series_push(lr->s, &lr->cap, lr->row_t, lr->q, lr->u) != 0) {
    snprintf(err, err_sz, "%s: out of memory", lr->path);
    return -1;
  }
  lr->row_open = 0;
  return 0;
}

/* the series joint the sensor reads, or -1 (another sensor: an IMU, a torque cell) */
static int joint_of(const log_reader *lr, const char *sensor) {
  for (int j = 0; j < lr->s->njoint; j++) {
    if (strcmp(sensor, lr->lj[j].sensor) == 0) {
      return j;
    }
  }
  return -1;
}

static void on_sample(log_reader *lr, const hil_log_record *rec, int j) {
  log_joint *l = &lr->lj[j];
  if (!lr->row_open) {
    lr->row_open = 1;
    lr->row_t = rec->t;
    for (int i = 0; i < lr->s->njoint; i++) {
      lr->q[i] = NAN;
    }
  }
  double v = rec->valid && l->channel < rec->nch ? rec->value[l->channel] * l->factor : NAN;
  if (l->wrap && isfinite(v) && isfinite(l->prev)) {
    v = l->prev + sens_wrap_angle(v - l->prev); /* turns are the joint's, not the format's */
  }
  if (isfinite(v)) {
    l->prev = v;
  }
  lr->q[j] = v;
}

static void on_command(log_reader *lr, const hil_log_record *rec) {
  if (strncmp(rec->result, "rejected", 8) == 0 || !isfinite(rec->command)) {
    return; /* the runtime kept the previous command */
  }
  for (int k = 0; k < lr->s->nact; k++) {
    if (strcmp(lr->s->act_name[k], rec->actuator) != 0) {
      continue;
    }
    const double *r = lr->m->actuators[lr->act_of[k]].ctrlrange;
    double v = rec->command;
    if (strcmp(rec->result, "clamped") == 0 && r[0] < r[1]) {
      v = fmin(fmax(v, r[0]), r[1]);
    }
    lr->u[k] = v;
  }
}

static int read_records(log_reader *lr, hil_log_reader *r, char *err, size_t err_sz) {
  hil_log_record *rec = malloc(sizeof *rec);
  int rc = rec ? 0 : -1;
  if (!rec) {
    snprintf(err, err_sz, "out of memory");
  }
  while (rc == 0) {
    const int k = hil_log_next(r, rec, err, err_sz);
    if (k == HIL_LOG_ETRUNC) {
      /* a run killed mid-record: everything before it is intact (docs/logs.md) */
      snprintf(lr->s->warning, sizeof lr->s->warning, "%s", err);
      break;
    }
    if (k <= 0) {
      rc = k < 0 ? -1 : 0;
      break;
    }
    const int joint_sample = rec->type == HIL_LOG_SAMPLE && joint_of(lr, rec->sensor) >= 0;
    if ((joint_sample || rec->type == HIL_LOG_COMMAND) && lr->row_open && rec->t > lr->row_t) {
      rc = push_row(lr, err, err_sz); /* the row's instant is complete */
    }
    if (rc == 0 && joint_sample) {
      if (lr->s->n > 0 && !lr->row_open && !(rec->t > lr->s->t[lr->s->n - 1])) {
        snprintf(err, err_sz, "%s: record %lld at byte %lld: sample time %.17g is not after the "
                 "previous instant's %.17g", lr->path, rec->index, rec->offset, rec->t,
                 lr->s->t[lr->s->n - 1]);
        rc = -1;
      } else {
        on_sample(lr, rec, joint_of(lr, rec->sensor));
      }
    } else if (rc == 0 && rec->type == HIL_LOG_COMMAND) {
      on_command(lr, rec);
    }
  }
  if (rc == 0) {
    rc = push_row(lr, err, err_sz);
  }
  if (rc == 0 && !hil_log_reader_saw_end(r) && !lr->s->warning[0]) {
    snprintf(lr->s->warning, sizeof lr->s->warning,
             "%s: no end record: the recording did not close cleanly", lr->path);
  }
  free(rec);
  return rc;
}

int sysid_series_load_log(sysid_series *s, const char *path, const sim_model *m,
                          const sens_set *set, char *err, size_t err_sz) {
  memset(s, 0, sizeof *s);
  if (!set) {
    snprintf(err, err_sz, "%s: reading an Achilles log needs the sensors file that recorded it: "
             "it says which joint each encoder reads (--sensors FILE)", path);
    return -1;
  }
  hil_log_reader *r = hil_log_reader_open(path, err, err_sz);
  if (!r) {
    return -1;
  }
  snprintf(s->source, sizeof s->source, "%s", path);
  s->from_log = 1;
  const hil_log_header *h = hil_log_reader_header(r);
  log_reader lr = {path, m, s, NULL, NULL, NULL, NULL, 0, 0, 0};
  int rc = plan_joints(&lr, h, set, err, err_sz);
  if (rc == 0) {
    rc = plan_actuators(&lr, h, err, err_sz);
  }
  if (rc == 0) {
    lr.q = calloc((size_t)s->njoint + 1, sizeof *lr.q);
    lr.u = calloc((size_t)s->nact + 1, sizeof *lr.u);
    rc = lr.q && lr.u ? read_records(&lr, r, err, err_sz) : -1;
    if (!lr.q || !lr.u) {
      snprintf(err, err_sz, "out of memory");
    }
  }
  if (rc == 0 && s->n < 2) {
    snprintf(err, err_sz, "%s: %d instants with encoder samples: a series needs at least two",
             path, s->n);
    rc = -1;
  }
  if (rc == 0 && strcmp(h->robot, m->name) != 0 && !s->warning[0]) {
    snprintf(s->warning, sizeof s->warning, "%s: recorded from robot \"%s\", fitted to \"%s\" "
             "(its joint and actuator names match)", path, h->robot, m->name);
  }
  free(lr.lj);
  free(lr.act_of);
  free(lr.q);
  free(lr.u);
  hil_log_reader_close(&r);
  if (rc != 0) {
    sysid_series_free(s);
  }
  return rc;
}
