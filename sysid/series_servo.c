/* sysid/series_servo.c: the servos' Goal Positions of an Achilles log as the inputs of
 * `achilles sysid --servo-goals` (series.h, docs/sysid.md section 10.1).
 *
 * The bus records every control-table field a servo's loop took, at the step that took it (a
 * "servo" record, docs/logs.md; hil/servo/servo_watch.h): so the goal of the row at step k is the
 * one the loop used at k, exactly, whatever the client's timing. The fit's loop runs the factory
 * settings with torque on (sysid/servo_loop.c), so the series starts at the first row at which
 * every servo does, and a later record that leaves them (torque off, another mode, a profile, new
 * gains) is an error naming it: the fit would model another servo than the one that moved.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"
#include "hil/servo/servo_watch.h"
#include "sysid/sysid.h"

#define TWO_PI 6.283185307179586
#define SAME_TIME 1e-9 /* s: a record and a sample of one step carry the same simulation time */

/* one servo as the log's records set it, beside its factory table */
typedef struct goal_servo {
  const sysid_servo *sv;
  int a;              /* series actuator */
  int seen;           /* a record of it was read */
  dxl_device now, factory;
} goal_servo;

typedef struct goal_reader {
  const char *path;
  sysid_series *s;
  goal_servo *g;
  int ng;
  int first;          /* the first row at which every servo runs as the fit's loop does */
  int row;            /* rows [0, row) have their inputs */
} goal_reader;

/* the value the fit's loop runs a field at: torque on, everything else as the factory set it */
static uint32_t regime_value(const goal_servo *g, const servo_watch_field *f) {
  return f->address == DXL_TORQUE_ENABLE ? 1 : servo_watch_value(g->factory.mem, f);
}

/* the field of a servo's table that runs otherwise than the fit's loop (torque off, or a field
   other than the goal off its factory value), or NULL */
static const servo_watch_field *off_regime(const goal_servo *g) {
  int n;
  const servo_watch_field *f = servo_watch_fields(SERVO_WATCH_DXL, &n);
  const int xl = g->now.model == DXL_MODEL_XL430_W250;
  for (int i = 0; i < n; i++) {
    if (f[i].address == DXL_GOAL_POSITION || (f[i].xm_only && xl)) {
      continue;
    }
    if (servo_watch_value(g->now.mem, &f[i]) != regime_value(g, &f[i])) {
      return &f[i];
    }
  }
  return NULL;
}

/* rows before time t (strictly, by more than SAME_TIME) take the goals held now */
static void rows_before(goal_reader *gr, double t) {
  sysid_series *s = gr->s;
  for (; gr->row < s->n && s->t[gr->row] < t - SAME_TIME; gr->row++) {
    int regime = 1;
    for (int i = 0; i < gr->ng; i++) {
      regime &= gr->g[i].seen && !off_regime(&gr->g[i]);
    }
    if (regime && gr->first < 0) {
      gr->first = gr->row;
    }
    for (int i = 0; i < gr->ng; i++) {
      const int32_t ticks = (int32_t)dxl_device_get(&gr->g[i].now, DXL_GOAL_POSITION, 4);
      s->u[(size_t)gr->row * s->nact + gr->g[i].a] = (ticks - 2048.0) * TWO_PI / 4096.0;
    }
  }
}

/* a servo record into its servo's table; an error once the series has begun and the record
   takes the servo off the fit's loop */
static int on_servo(goal_reader *gr, const hil_log_record *rec, char *err, size_t err_sz) {
  goal_servo *g = NULL;
  for (int i = 0; i < gr->ng && !g; i++) {
    g = strcmp(gr->g[i].sv->actuator, rec->actuator) == 0 ? &gr->g[i] : NULL;
  }
  if (!g) {
    return 0; /* a servo whose inputs are its torques */
  }
  rows_before(gr, rec->t);
  for (int k = 0; k < rec->nreg; k++) {
    const servo_watch_field *f = servo_watch_find(SERVO_WATCH_DXL, rec->reg_name[k]);
    if (!f) {
      snprintf(err, err_sz, "%s: record %lld at byte %lld: servo \"%s\": \"%s\" is not a field "
               "of a Dynamixel X-series servo's table (a log of another servo model?)", gr->path,
               rec->index, rec->offset, rec->actuator, rec->reg_name[k]);
      return -1;
    }
    dxl_device_set(&g->now, f->address, f->size, rec->reg_value[k]);
  }
  g->seen = 1;
  const servo_watch_field *off = gr->first >= 0 ? off_regime(g) : NULL;
  if (off) {
    const uint32_t want = regime_value(g, off);
    snprintf(err, err_sz, "%s: record %lld at byte %lld: servo \"%s\" at step %llu: %s %lu "
             "(the fit's servo loop runs %lu: the factory settings with torque on; only Goal "
             "Position may change once every servo runs so, docs/sysid.md section 10.1)",
             gr->path, rec->index, rec->offset, rec->actuator, (unsigned long long)rec->step,
             off->name, (unsigned long)servo_watch_value(g->now.mem, off), (unsigned long)want);
    return -1;
  }
  return 0;
}

static int read_goals(goal_reader *gr, hil_log_reader *r, char *err, size_t err_sz) {
  hil_log_record *rec = malloc(sizeof *rec);
  int rc = rec ? 0 : -1, k;
  if (!rec) {
    snprintf(err, err_sz, "out of memory");
  }
  while (rc == 0 && (k = hil_log_next(r, rec, err, err_sz)) != 0) {
    if (k == HIL_LOG_ETRUNC) {
      break; /* the series' reader said so in its warning */
    }
    if (k < 0) {
      rc = -1;
    } else if (rec->type == HIL_LOG_SERVO) {
      rc = on_servo(gr, rec, err, err_sz);
    }
  }
  free(rec);
  if (rc == 0) {
    rows_before(gr, INFINITY);
  }
  return rc;
}

/* the rows before the first that every servo runs as the fit's loop are left out */
static void drop_rows(sysid_series *s, int first) {
  const int n = s->n - first;
  memmove(s->t, s->t + first, (size_t)n * sizeof *s->t);
  memmove(s->q, s->q + (size_t)first * s->njoint, (size_t)n * s->njoint * sizeof *s->q);
  memmove(s->u, s->u + (size_t)first * s->nact, (size_t)n * s->nact * sizeof *s->u);
  s->n = n;
}

static int setup(goal_reader *gr, const sysid_servo *sv, int nsv, char *err, size_t err_sz) {
  gr->g = calloc((size_t)nsv + 1, sizeof *gr->g);
  if (!gr->g) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int i = 0; i < nsv; i++) {
    goal_servo *g = &gr->g[gr->ng++];
    g->sv = &sv[i];
    g->a = -1;
    for (int k = 0; k < gr->s->nact; k++) {
      g->a = strcmp(gr->s->act_name[k], sv[i].actuator) == 0 ? k : g->a;
    }
    if (g->a < 0 || dxl_device_init(&g->factory, (dxl_model)sv[i].model, 1) < 0) {
      snprintf(err, err_sz, "%s: servo \"%s\": %s", gr->path, sv[i].actuator,
               g->a < 0 ? "not an actuator of the log's header"
                        : "not a Dynamixel X-series model the fit's loop runs");
      return -1;
    }
    g->now = g->factory;
  }
  return 0;
}

int sysid_series_servo_goals(sysid_series *s, const char *path, const struct sysid_servo *sv,
                             int nsv, char *err, size_t err_sz) {
  hil_log_reader *r = hil_log_reader_open(path, err, err_sz);
  if (!r) {
    return -1;
  }
  goal_reader gr = {path, s, NULL, 0, -1, 0};
  int rc = setup(&gr, sv, nsv, err, err_sz);
  if (rc == 0) {
    rc = read_goals(&gr, r, err, err_sz);
  }
  for (int i = 0; rc == 0 && i < gr.ng; i++) {
    if (!gr.g[i].seen) {
      snprintf(err, err_sz, "%s: no servo record of \"%s\": the log does not say which Goal "
               "Positions its servo took (a log of version 1, or of a run without the servo bus)",
               path, gr.g[i].sv->actuator);
      rc = -1;
    }
  }
  if (rc == 0 && gr.first < 0) {
    snprintf(err, err_sz, "%s: at no sample does every servo run with torque on and its factory "
             "settings, as the fit's servo loop does (docs/sysid.md section 10.1)", path);
    rc = -1;
  }
  if (rc == 0) {
    drop_rows(s, gr.first);
  }
  free(gr.g);
  hil_log_reader_close(&r);
  return rc;
}
