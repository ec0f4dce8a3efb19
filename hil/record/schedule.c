/* hil/record/schedule.c: a log or CSV file into a replay schedule — every sample with its
 * time, checked at load (time going back, gaps, damage), cut to the selected window and
 * topics; see replay.h and docs/replay.md. The player that sends it is player.c. */
#include "hil/record/replay.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"
#include "hil/record/log.h"
#include "sim/json_read.h" /* sim_json_utf8_valid_prefix */

#define CSV_COLUMNS_MAX 1024

/* --- topic patterns --------------------------------------------------------------------------- */

int hil_replay_topic_match(const char *patterns, const char *topic) {
  if (!patterns || !patterns[0]) {
    return 1;
  }
  const char *p = patterns;
  for (;;) {
    const char *comma = strchr(p, ',');
    const size_t n = comma ? (size_t)(comma - p) : strlen(p);
    char pat[HIL_REPLAY_TOPICS_MAX];
    if (n > 0 && n < sizeof pat) {
      memcpy(pat, p, n);
      pat[n] = '\0';
      const int glob = strpbrk(pat, "*?[") != NULL;
      if (glob ? fnmatch(pat, topic, 0) == 0 : strncmp(topic, pat, n) == 0) {
        return 1;
      }
    }
    if (!comma) {
      return 0;
    }
    p = comma + 1;
  }
}

/* --- building a schedule ---------------------------------------------------------------------- */

static const char *type_prefix(const char *type) {
  if (strcmp(type, "encoder") == 0) {
    return "enc";
  }
  if (strcmp(type, "imu") == 0) {
    return "imu";
  }
  if (strcmp(type, "touch") == 0) {
    return "tch";
  }
  return strcmp(type, "torque") == 0 ? "trq" : "csv";
}

static void sensor_set_type(hil_replay_sensor *sn, const char *type, const char *patterns) {
  snprintf(sn->type, sizeof sn->type, "%s", type);
  snprintf(sn->topic, sizeof sn->topic, "%s/%s", type_prefix(type), sn->name);
  sn->selected = hil_replay_topic_match(patterns, sn->topic);
}

static int find_sensor(const hil_replay_schedule *s, const char *name, int hint) {
  if (hint >= 0 && hint < s->nsensors && strcmp(s->sensor[hint].name, name) == 0) {
    return hint;
  }
  for (int i = 0; i < s->nsensors; i++) {
    if (strcmp(s->sensor[i].name, name) == 0) {
      return i;
    }
  }
  return -1;
}

/* both ends included, with the schedule's tolerance: simulation time accumulates rounding */
static int in_window(const hil_replay_schedule *s, const hil_replay_select *sel, double t) {
  return (!sel->has_from || t >= sel->from - s->window_tol) &&
         (!sel->has_to || t <= sel->to + s->window_tol);
}

/* the period the window tolerance and the gaps are measured in: the header's physics period, or
 * a CSV's smallest time step (1 ms when neither is known) */
static void set_time_base(hil_replay_schedule *s, double period, double *base) {
  *base = period > 0 && isfinite(period) ? period : 1e-3;
  s->window_tol = HIL_REPLAY_WINDOW_TOL * *base;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) {
    return 0;
  }
  size_t ncap = *cap ? *cap : 4096;
  while (ncap < need) {
    ncap *= 2;
  }
  void *np = realloc(*p, ncap * elem);
  if (!np) {
    return HIL_LOG_EIO;
  }
  *p = np;
  *cap = ncap;
  return 0;
}

/* appends one sample: nch values, and nch truth values when truth is not NULL */
static int push_entry(hil_replay_schedule *s, hil_replay_entry e, const double *value,
                      const double *truth) {
  const hil_replay_sensor *sn = &s->sensor[e.sensor];
  const size_t nv = (size_t)sn->nch * (truth ? 2u : 1u);
  if (grow((void **)&s->entry, &s->entry_cap, s->n + 1, sizeof *s->entry) ||
      grow((void **)&s->pool, &s->pool_cap, s->npool + nv, sizeof *s->pool) ||
      s->npool + nv > UINT32_MAX) {
    return HIL_LOG_EIO;
  }
  e.pool = (uint32_t)s->npool;
  e.has_truth = truth != NULL;
  if (nv == 0) { /* a sensor without channels: the pool may still be NULL, and NULL + 0 is UB */
    s->entry[s->n++] = e;
    return 0;
  }
  memcpy(s->pool + s->npool, value, (size_t)sn->nch * sizeof *value);
  if (truth) {
    memcpy(s->pool + s->npool + sn->nch, truth, (size_t)sn->nch * sizeof *truth);
  }
  s->npool += nv;
  s->entry[s->n++] = e;
  return 0;
}

/* the first damage is kept; `stop` tells the reader whether to go on */
static int note_damage(hil_replay_schedule *s, const hil_replay_select *sel, const char *msg) {
  if (s->damaged++ == 0) {
    snprintf(s->damage, sizeof s->damage, "%s", msg);
  }
  if (!sel->skip_damaged) {
    s->stopped = 1;
    return 1;
  }
  return 0;
}

/* The latest t of the sample records read (selected or not), for the time checks. */
typedef struct time_track {
  int have;
  double max;
  double base; /* the period (set_time_base) */
} time_track;

/* a gap played across: the entries from the next one on are due `cut` earlier, so the next
 * instant comes one period after the last before the gap. A gap before the first entry cuts
 * nothing (the schedule starts after it). */
static int add_gap(hil_replay_schedule *s, double gap, double base, const char *note) {
  if (s->gaps_met++ == 0) {
    snprintf(s->gap_note, sizeof s->gap_note, "%s", note);
  }
  if (s->n == 0) {
    return 0;
  }
  if (grow((void **)&s->gap, &s->gap_cap, s->ngaps + 1, sizeof *s->gap)) {
    return HIL_LOG_EIO;
  }
  const double cut = fmax(gap - base, 0.0);
  s->gap_cut += cut;
  s->gap[s->ngaps++] = (hil_replay_gap){.entry = s->n, .cut = cut, .total = s->gap_cut};
  return 0;
}

/* The time of a sample record against the latest t of the records before it (damaged ones left
 * out, so one absurd time costs one record):
 *   - earlier by more than back_tol: damage (a log's sensor on its own clock publishes a sample
 *     taken since the last physics step, so its t may lag the latest by less than one period);
 *   - later by more than the gap limit: damage (a bad time would make the player wait for it),
 *     or with skip_gaps a gap played across.
 * 1 when damaged (what filled), 0 when the record goes on, HIL_LOG_EIO when out of memory.
 * place: "FILE: record N at byte B". */
static int check_time(hil_replay_schedule *s, const hil_replay_select *sel, time_track *tt,
                      double t, double back_tol, const char *place, char *what,
                      size_t what_sz) {
  const double limit = sel->max_gap_s > 0 ? sel->max_gap_s : HIL_REPLAY_MAX_GAP_S;
  if (tt->have && t < tt->max - back_tol) {
    snprintf(what, what_sz, "t = %.9g s goes back from t = %.9g s of an earlier sample by more "
             "than one physics period (%g s)", t, tt->max, back_tol);
    return 1;
  }
  if (tt->have && t - tt->max > limit) {
    const double gap = t - tt->max;
    if (!sel->skip_gaps) {
      snprintf(what, what_sz, "t jumps from %.9g s to %.9g s, a gap of %g s, longer than the "
               "%g s limit (a bad time, or a pause in the recording: --skip-gaps plays across "
               "it, --max-gap S sets the limit)", tt->max, t, gap, limit);
      return 1;
    }
    char note[512];
    snprintf(note, sizeof note, "%s: t jumps from %.9g s to %.9g s, a gap of %g s: played "
             "across without waiting", place, tt->max, t, gap);
    if (add_gap(s, gap, tt->base, note)) {
      return HIL_LOG_EIO;
    }
  }
  tt->max = tt->have ? fmax(tt->max, t) : t;
  tt->have = 1;
  return 0;
}

/* t range, period, and each sensor's sample count and seq span */
static void finish_schedule(hil_replay_schedule *s) {
  double min_step = INFINITY;
  for (size_t i = 0; i < s->n; i++) {
    const hil_replay_entry *e = &s->entry[i];
    hil_replay_sensor *sn = &s->sensor[e->sensor];
    if (sn->samples++ == 0) {
      sn->seq_first = e->seq;
    }
    sn->seq_first = e->seq < sn->seq_first ? e->seq : sn->seq_first;
    sn->seq_last = e->seq > sn->seq_last ? e->seq : sn->seq_last;
    if (i == 0) {
      s->t_first = s->t_last = e->t;
    }
    s->t_first = fmin(s->t_first, e->t);
    s->t_last = fmax(s->t_last, e->t);
    if (i > 0 && e->t > s->entry[i - 1].t) {
      min_step = fmin(min_step, e->t - s->entry[i - 1].t);
    }
  }
  if (!(s->rate_hz > 0) && isfinite(min_step)) {
    s->rate_hz = 1.0 / min_step;
  }
  s->period = s->rate_hz > 0 ? 1.0 / s->rate_hz : 1e-3;
  for (int k = 0; k < s->nsensors; k++) { /* CSV: no rate per sensor */
    if (!(s->sensor[k].rate_hz > 0)) {
      s->sensor[k].rate_hz = s->rate_hz;
    }
  }
  if (!s->robot[0]) { /* CSV: the file's name */
    const char *slash = strrchr(s->path, '/');
    snprintf(s->robot, sizeof s->robot, "%s", slash ? slash + 1 : s->path);
  }
}

/* --- logs ------------------------------------------------------------------------------------- */

static void sensors_from_header(hil_replay_schedule *s, const hil_log_header *h,
                                const char *patterns) {
  s->rate_hz = h->rate_hz;
  s->nactuators = h->nactuators;
  for (int a = 0; a < h->nactuators && a < HIL_LOG_MAX_ACTUATORS; a++) {
    snprintf(s->actuator[a], sizeof s->actuator[a], "%s", h->actuator[a]);
  }
  snprintf(s->robot, sizeof s->robot, "%s", h->robot);
  s->has_seed = 1;
  s->seed = h->seed;
  s->nsensors = h->nsensors;
  for (int i = 0; i < h->nsensors; i++) {
    const hil_log_sensor_info *si = &h->sensor[i];
    hil_replay_sensor *sn = &s->sensor[i];
    snprintf(sn->name, sizeof sn->name, "%s", si->name);
    sn->nch = si->nch;
    sn->rate_hz = si->rate_hz;
    memcpy(sn->channel, si->channel, sizeof sn->channel);
    for (int c = 0; c < si->nch; c++) {
      snprintf(sn->unit[c], sizeof sn->unit[c], "%s", si->unit[c]);
    }
    sensor_set_type(sn, si->type, patterns);
  }
}

/* the sensor of a sample record, or -1 when the header does not describe it that way */
static int record_sensor(const hil_replay_schedule *s, const hil_log_record *rec, int hint) {
  const int k = find_sensor(s, rec->sensor, hint);
  if (k < 0 || s->sensor[k].nch != rec->nch) {
    return -1;
  }
  for (int c = 0; c < rec->nch; c++) {
    if (strcmp(s->sensor[k].channel[c], rec->channel[c]) != 0) {
      return -1;
    }
  }
  return k;
}

static int load_log(hil_replay_schedule *s, const char *path, const hil_replay_select *sel,
                    char *err, size_t err_sz) {
  hil_log_reader *r = hil_log_reader_open(path, err, err_sz);
  if (!r) {
    return HIL_LOG_EFORMAT;
  }
  sensors_from_header(s, hil_log_reader_header(r), sel->topics);
  time_track tt = {0};
  set_time_base(s, s->rate_hz > 0 ? 1.0 / s->rate_hz : 0, &tt.base);
  hil_log_record *rec = malloc(sizeof *rec);
  char msg[512], place[320], what[300];
  int rc = rec ? 0 : HIL_LOG_EIO, k, hint = 0;
  while (rc == 0 && (k = hil_log_next(r, rec, msg, sizeof msg)) != 0) {
    if (k < 0) {
      if (k == HIL_LOG_EIO) {
        snprintf(err, err_sz, "%s", msg);
        rc = k;
      } else if (note_damage(s, sel, msg) || k == HIL_LOG_ETRUNC) {
        break;
      }
      continue;
    }
    if (rec->type != HIL_LOG_SAMPLE) {
      continue;
    }
    s->samples_read++;
    const int i = record_sensor(s, rec, hint);
    if (i < 0) {
      snprintf(msg, sizeof msg, "%s: record %lld at byte %lld: sample of \"%s\" does not match "
               "the header's sensors and channels", path, rec->index, rec->offset, rec->sensor);
      if (note_damage(s, sel, msg)) {
        break;
      }
      continue;
    }
    hint = i;
    snprintf(place, sizeof place, "%s: record %lld at byte %lld", path, rec->index, rec->offset);
    const int gap = check_time(s, sel, &tt, rec->t, tt.base * (1 + 1e-6), place, what,
                               sizeof what);
    if (gap == 1) {
      snprintf(msg, sizeof msg, "%s: %s", place, what);
      if (note_damage(s, sel, msg)) {
        break;
      }
      continue;
    }
    if (gap < 0) {
      snprintf(err, err_sz, "%s: out of memory", path);
      rc = gap;
      break;
    }
    if (!s->sensor[i].selected || !in_window(s, sel, rec->t)) {
      continue;
    }
    const hil_replay_entry e = {.t = rec->t, .t_truth = rec->t_truth, .seq = rec->seq,
                                .sensor = (int16_t)i, .valid = (uint8_t)(rec->valid != 0)};
    rc = push_entry(s, e, rec->value, rec->truth);
    if (rc) {
      snprintf(err, err_sz, "%s: out of memory", path);
    }
  }
  /* read to its end (not stopped at damage) without an end record: the recorder was killed */
  s->incomplete = rc == 0 && !s->stopped && !hil_log_reader_saw_end(r);
  free(rec);
  hil_log_reader_close(&r);
  return rc;
}

/* --- CSV -------------------------------------------------------------------------------------- */

typedef struct csv_column {
  int sensor;  /* -1: the time column */
  int kind;    /* 0 measured, 1 truth, 2 seq */
  int channel;
} csv_column;

typedef struct csv_state {
  int ncol;
  csv_column col[CSV_COLUMNS_MAX];
  char *field[CSV_COLUMNS_MAX];
  int has_seq[HIL_REPLAY_MAX_SENSORS], has_truth[HIL_REPLAY_MAX_SENSORS];
  uint64_t next_seq[HIL_REPLAY_MAX_SENSORS];
  time_track tt; /* the latest time of the rows read */
} csv_state;

static int all_in(const hil_replay_sensor *sn, const char *const *names) {
  for (int c = 0; c < sn->nch; c++) {
    int found = 0;
    for (const char *const *k = names; *k && !found; k++) {
      found = strcmp(sn->channel[c], *k) == 0;
    }
    if (!found) {
      return 0;
    }
  }
  return sn->nch > 0;
}

/* a CSV sensor whose channels are all those of one sensor type is published as that type, on
 * its live topic with its live units; any other under csv/<name> without units */
static void csv_infer_type(hil_replay_sensor *sn, const char *patterns) {
  static const char *const enc[] = {"counts", "angle", "velocity", "index", NULL};
  static const char *const imu[] = {"gyro.x",  "gyro.y",  "gyro.z", "accel.x",
                                    "accel.y", "accel.z", NULL};
  static const char *const trq[] = {"torque", "current", NULL};
  static const char *const tch[] = {"normal", "force.x", "force.y", "force.z", NULL};
  const char *type = all_in(sn, enc) ? "encoder" : all_in(sn, imu) ? "imu"
                     : all_in(sn, trq)                             ? "torque"
                     : all_in(sn, tch)                             ? "touch"
                                                                   : "csv";
  for (int c = 0; c < sn->nch; c++) {
    const char *ch = sn->channel[c], *unit = "";
    if (strcmp(type, "encoder") == 0) {
      unit = strcmp(ch, "counts") == 0 ? "count" : strcmp(ch, "angle") == 0 ? "rad"
             : strcmp(ch, "velocity") == 0                                 ? "rad/s"
                                                                           : "flag";
    } else if (strcmp(type, "imu") == 0) {
      unit = strncmp(ch, "gyro", 4) == 0 ? "rad/s" : "m/s^2";
    } else if (strcmp(type, "torque") == 0) {
      unit = strcmp(ch, "current") == 0 ? "A" : "N*m";
    } else if (strcmp(type, "touch") == 0) {
      unit = "N";
    }
    snprintf(sn->unit[c], sizeof sn->unit[c], "%s", unit);
  }
  sensor_set_type(sn, type, patterns);
}

/* one header column "<sensor>.<channel>[.meas|.true]" or "<sensor>.seq" */
static int csv_column_add(hil_replay_schedule *s, csv_state *cs, int i, char *name, char *what,
                          size_t what_sz) {
  const size_t utf8_ok = sim_json_utf8_valid_prefix(name);
  if (name[utf8_ok]) { /* the name would reach the JSON messages, which must be UTF-8 */
    snprintf(what, what_sz, "column %d: name is not valid UTF-8 (at byte %zu)", i + 1, utf8_ok);
    return -1;
  }
  char *dot = strchr(name, '.');
  if (!dot || dot == name || !dot[1]) {
    snprintf(what, what_sz, "column %d \"%s\": expected <sensor>.<channel>", i + 1, name);
    return -1;
  }
  *dot = '\0';
  char *rest = dot + 1;
  const size_t rl = strlen(rest);
  csv_column *col = &cs->col[i];
  col->kind = 0;
  if (strcmp(rest, "seq") == 0) {
    col->kind = 2;
  } else if (rl > 5 && (strcmp(rest + rl - 5, ".true") == 0 ||
                         strcmp(rest + rl - 5, ".meas") == 0)) {
    col->kind = strcmp(rest + rl - 5, ".true") == 0;
    rest[rl - 5] = '\0';
  }
  int k = find_sensor(s, name, -1);
  if (k < 0) {
    k = s->nsensors; /* a new sensor */
  }
  for (int prev = 1; prev < i && k < s->nsensors; prev++) {
    const csv_column *pc = &cs->col[prev];
    const int same_channel =
        pc->kind == 2 || strcmp(s->sensor[k].channel[pc->channel], rest) == 0;
    if (pc->sensor == k && pc->kind == col->kind && same_channel) {
      snprintf(what, what_sz, "columns %d and %d are the same: %s.%s%s", prev + 1, i + 1, name,
               col->kind == 2 ? "seq" : rest, col->kind == 1 ? ".true" : "");
      return -1;
    }
  }
  if (k == s->nsensors) {
    if (s->nsensors >= HIL_REPLAY_MAX_SENSORS || strlen(name) >= HIL_LOG_NAME_MAX) {
      snprintf(what, what_sz, "column %d: more than %d sensors, or a name too long", i + 1,
               HIL_REPLAY_MAX_SENSORS);
      return -1;
    }
    k = s->nsensors++;
    snprintf(s->sensor[k].name, sizeof s->sensor[k].name, "%s", name);
  }
  col->sensor = k;
  if (col->kind == 2) {
    cs->has_seq[k] = 1;
    return 0;
  }
  hil_replay_sensor *sn = &s->sensor[k];
  int c = 0;
  while (c < sn->nch && strcmp(sn->channel[c], rest) != 0) {
    c++;
  }
  if (c == sn->nch) {
    if (sn->nch >= SENS_MAX_CHANNELS || strlen(rest) >= SENS_CHANNEL_NAME_MAX) {
      snprintf(what, what_sz, "column %d: more than %d channels for %s, or a name too long",
               i + 1, SENS_MAX_CHANNELS, name);
      return -1;
    }
    snprintf(sn->channel[sn->nch++], SENS_CHANNEL_NAME_MAX, "%s", rest);
  }
  col->channel = c;
  cs->has_truth[k] |= col->kind == 1;
  return 0;
}

static int csv_header(hil_replay_schedule *s, csv_state *cs, char *line, const char *patterns,
                      char *what, size_t what_sz) {
  cs->ncol = hil_csv_split(line, cs->field, CSV_COLUMNS_MAX);
  if (cs->ncol > CSV_COLUMNS_MAX || strcmp(cs->field[0], "time") != 0) {
    snprintf(what, what_sz, "expected a header \"time,<sensor>.<channel>,...\" of at most %d "
             "columns", CSV_COLUMNS_MAX);
    return -1;
  }
  cs->col[0].sensor = -1;
  for (int i = 1; i < cs->ncol; i++) {
    if (csv_column_add(s, cs, i, cs->field[i], what, what_sz)) {
      return -1;
    }
  }
  for (int k = 0; k < s->nsensors; k++) {
    csv_infer_type(&s->sensor[k], patterns);
  }
  return 0;
}

static int csv_number(const char *cell, double *out) {
  char *end;
  errno = 0;
  *out = strtod(cell, &end);
  return (end == cell || *end != '\0' || errno == ERANGE || !isfinite(*out)) ? -1 : 0;
}

/* the time of a row: a number, not earlier than any row before (docs/logs.md: time increases),
 * and no jump beyond the gap limit. 0 or -1 (what filled), -2 out of memory. */
static int csv_time(hil_replay_schedule *s, csv_state *cs, const hil_replay_select *sel,
                    double t, const char *place, char *what, size_t what_sz) {
  if (cs->tt.have && t < cs->tt.max) {
    snprintf(what, what_sz, "time %.9g goes back (an earlier row has %.9g; time must not "
             "decrease)", t, cs->tt.max);
    return -1;
  }
  const int gap = check_time(s, sel, &cs->tt, t, INFINITY, place, what, what_sz);
  return gap == 1 ? -1 : gap < 0 ? -2 : 0;
}

/* one data row: a sample of every sensor with a non-blank cell */
static int csv_row(hil_replay_schedule *s, csv_state *cs, const hil_replay_select *sel,
                   const char *place, char *what, size_t what_sz) {
  double t, value[HIL_REPLAY_MAX_SENSORS][SENS_MAX_CHANNELS],
      truth[HIL_REPLAY_MAX_SENSORS][SENS_MAX_CHANNELS], seq[HIL_REPLAY_MAX_SENSORS];
  int present[HIL_REPLAY_MAX_SENSORS] = {0};
  for (int k = 0; k < s->nsensors; k++) {
    seq[k] = NAN;
    for (int c = 0; c < SENS_MAX_CHANNELS; c++) {
      value[k][c] = truth[k][c] = NAN;
    }
  }
  if (csv_number(cs->field[0], &t)) {
    snprintf(what, what_sz, "column 1: expected a time in s (got \"%s\")", cs->field[0]);
    return -1;
  }
  for (int i = 1; i < cs->ncol; i++) {
    const csv_column *col = &cs->col[i];
    double v = NAN;
    if (cs->field[i][0] && csv_number(cs->field[i], &v)) {
      snprintf(what, what_sz, "column %d: expected a number or a blank (got \"%s\")", i + 1,
               cs->field[i]);
      return -1;
    }
    if (col->kind == 2 && !isnan(v) && !(v >= 0 && v <= 9007199254740992.0 && v == floor(v))) {
      /* a seq beyond 2^53 is not an exact integer, and one beyond 2^64 no uint64_t at all */
      snprintf(what, what_sz, "column %d: expected a sequence number from 0 to 2^53 (got \"%s\")",
               i + 1, cs->field[i]);
      return -1;
    }
    present[col->sensor] |= cs->field[i][0] != '\0';
    if (col->kind == 2) {
      seq[col->sensor] = v;
    } else if (col->kind == 1) {
      truth[col->sensor][col->channel] = v;
    } else {
      value[col->sensor][col->channel] = v;
    }
  }
  const int bad_time = csv_time(s, cs, sel, t, place, what, what_sz);
  if (bad_time) {
    return bad_time;
  }
  for (int k = 0; k < s->nsensors; k++) {
    if (!present[k]) {
      continue;
    }
    int valid = 1; /* every channel measured (a channel with only a truth column never is) */
    for (int c = 0; c < s->sensor[k].nch; c++) {
      valid &= !isnan(value[k][c]);
    }
    hil_replay_entry e = {.t = t, .t_truth = t, .sensor = (int16_t)k, .valid = (uint8_t)valid};
    e.seq = cs->has_seq[k] && seq[k] >= 0 ? (uint64_t)seq[k] : cs->next_seq[k];
    cs->next_seq[k] = e.seq + 1;
    if (s->sensor[k].selected && in_window(s, sel, t) &&
        push_entry(s, e, value[k], cs->has_truth[k] ? truth[k] : NULL)) {
      return -2;
    }
    s->samples_read++;
  }
  return 0;
}

/* The smallest positive step between the times of consecutive rows (a first pass over the time
 * column; unreadable rows are left to the second), or 0; rewinds f. */
static double csv_min_step(FILE *f) {
  char *line = NULL;
  size_t cap = 0;
  double prev = NAN, step = INFINITY;
  for (long long lineno = 1; getline(&line, &cap, f) > 0; lineno++) {
    char *end;
    const double t = strtod(line, &end);
    if (lineno == 1 || end == line || !isfinite(t)) {
      continue;
    }
    if (t > prev) {
      step = fmin(step, t - prev);
    }
    prev = t;
  }
  free(line);
  rewind(f);
  return isfinite(step) ? step : 0;
}

static int load_csv(hil_replay_schedule *s, FILE *f, const char *path, const hil_replay_select *sel,
                    char *err, size_t err_sz) {
  csv_state *cs = calloc(1, sizeof *cs);
  char *line = NULL, what[300], msg[700], place[320];
  size_t cap = 0;
  long long lineno = 0, offset = 0;
  ssize_t n;
  int rc = cs ? 0 : HIL_LOG_EIO;
  if (cs) {
    set_time_base(s, csv_min_step(f), &cs->tt.base);
  }
  while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
    const long long at = offset;
    offset += n;
    lineno++;
    const int cut = line[n - 1] != '\n';
    if (lineno == 1) {
      if (csv_header(s, cs, line, sel->topics, what, sizeof what)) {
        snprintf(err, err_sz, "%s: line 1: %s", path, what);
        rc = HIL_LOG_EFORMAT;
      }
      continue;
    }
    if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n')) {
      continue;
    }
    const int nf = hil_csv_split(line, cs->field, CSV_COLUMNS_MAX);
    int bad = 0;
    if (nf != cs->ncol) {
      snprintf(what, sizeof what, "%s%d fields, the header has %d",
               cut ? "truncated line (no end of line): " : "", nf, cs->ncol);
      bad = -1;
    } else {
      snprintf(place, sizeof place, "%s: line %lld at byte %lld", path, lineno, at);
      bad = csv_row(s, cs, sel, place, what, sizeof what);
    }
    if (bad == -2) {
      snprintf(err, err_sz, "%s: out of memory", path);
      rc = HIL_LOG_EIO;
    } else if (bad) {
      snprintf(msg, sizeof msg, "%s: line %lld at byte %lld: %s", path, lineno, at, what);
      if (note_damage(s, sel, msg)) {
        break;
      }
    }
  }
  if (rc == 0 && lineno == 0) {
    snprintf(err, err_sz, "%s: empty file (expected a log, or a CSV header \"time,...\")", path);
    rc = HIL_LOG_EFORMAT;
  }
  free(line);
  free(cs);
  return rc;
}

int hil_replay_load(hil_replay_schedule *s, const char *path, const hil_replay_select *sel,
                    char *err, size_t err_sz) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return HIL_LOG_EIO;
  }
  char head[10] = {0};
  int is_log = fread(head, 1, sizeof head, f) == sizeof head && head[8] == ' ' && head[9] == '{';
  for (int i = 0; is_log && i < 8; i++) {
    is_log = (head[i] >= '0' && head[i] <= '9') || (head[i] >= 'a' && head[i] <= 'f');
  }
  int rc;
  if (is_log) {
    fclose(f);
    rc = load_log(s, path, sel, err, err_sz);
  } else {
    rewind(f);
    s->is_csv = 1;
    rc = load_csv(s, f, path, sel, err, err_sz);
    fclose(f);
  }
  if (rc != 0) {
    hil_replay_free(s);
    return rc;
  }
  finish_schedule(s);
  return 0;
}

void hil_replay_free(hil_replay_schedule *s) {
  free(s->entry);
  free(s->pool);
  free(s->gap);
  s->entry = NULL;
  s->pool = NULL;
  s->gap = NULL;
  s->n = s->npool = s->entry_cap = s->pool_cap = s->ngaps = s->gap_cap = 0;
}

/* --- samples and their JSON ------------------------------------------------------------------- */

double hil_replay_pass_length(const hil_replay_schedule *s) {
  return s->t_last - s->t_first + s->period;
}

/* the gaps cut before entry i: the total of the last gap whose entry is at or before i (they
 * are in entry order) */
static double cut_before(const hil_replay_schedule *s, size_t i) {
  size_t lo = 0, hi = s->ngaps;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (s->gap[mid].entry <= i) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo > 0 ? s->gap[lo - 1].total : 0.0;
}

double hil_replay_due_offset(const hil_replay_schedule *s, size_t i, long long pass) {
  return s->entry[i].t - s->t_first - cut_before(s, i) +
         (double)pass * (hil_replay_pass_length(s) - s->gap_cut);
}

void hil_replay_sample_at(hil_replay_sample *out, const hil_replay_schedule *s, size_t i,
                          long long pass) {
  const hil_replay_entry *e = &s->entry[i];
  const hil_replay_sensor *sn = &s->sensor[e->sensor];
  const double shift = (double)pass * hil_replay_pass_length(s);
  out->sensor = e->sensor;
  out->seq = e->seq + (uint64_t)pass * (sn->seq_last - sn->seq_first + 1);
  out->t = e->t + shift;
  out->t_truth = e->t_truth + shift;
  out->valid = e->valid;
  out->has_truth = e->has_truth;
  const double *v = s->pool + e->pool;
  for (int c = 0; c < sn->nch; c++) {
    out->value[c] = e->valid ? v[c] : NAN;
    out->truth[c] = e->has_truth ? v[sn->nch + c] : NAN;
  }
}

int hil_replay_topic(char *out, size_t out_sz, const hil_replay_sensor *sn, int truth) {
  const int n = snprintf(out, out_sz, "%s%s", truth ? "truth/" : "", sn->topic);
  return n < 0 || (size_t)n >= out_sz ? HIL_EINVAL : n;
}

/* the live layout (hil_msg_encode_sample_view), units from the file */
int hil_replay_encode_json(char *out, size_t out_sz, const hil_replay_sensor *sn,
                           const hil_replay_sample *smp, int truth) {
  hil_msg_sample_view v = {.sensor = sn->name,
                           .type = sn->type,
                           .truth = truth,
                           .seq = smp->seq,
                           .t = smp->t,
                           .t_truth = smp->t_truth,
                           .valid = smp->valid,
                           .nch = sn->nch,
                           .values = truth ? smp->truth : smp->value};
  for (int c = 0; c < sn->nch; c++) {
    v.channel[c] = sn->channel[c];
    v.unit[c] = sn->unit[c];
  }
  return hil_msg_encode_sample_view(out, out_sz, &v);
}

