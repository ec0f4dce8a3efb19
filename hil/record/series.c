/* hil/record/series.c: one channel of one sensor as a series, from a recording log or a CSV file
 * (docs/logs.md), and the CSV splitting both CSV readers use; see log.h. */
#include "hil/record/log_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json_read.h" /* sim_json_utf8_valid_prefix */

static int series_push(hil_series *s, size_t *cap, double t, double v, double truth,
                       int with_truth) {
  if (s->n == *cap) {
    const size_t ncap = *cap ? 2 * *cap : 4096;
    double *nt = realloc(s->t, ncap * sizeof *nt);
    if (nt) {
      s->t = nt;
    }
    double *nv = realloc(s->v, ncap * sizeof *nv);
    if (nv) {
      s->v = nv;
    }
    double *ntr = with_truth ? realloc(s->truth, ncap * sizeof *ntr) : NULL;
    if (ntr) {
      s->truth = ntr;
    }
    if (!nt || !nv || (with_truth && !ntr)) {
      return HIL_LOG_EIO;
    }
    *cap = ncap;
  }
  s->t[s->n] = t;
  s->v[s->n] = v;
  if (with_truth) {
    s->truth[s->n] = truth;
  }
  s->n++;
  return 0;
}

/* 1 when the header lists the record's sensor with the record's channels, in order */
static int series_matches_header(const hil_log_header *h, const hil_log_record *rec) {
  for (int i = 0; i < h->nsensors; i++) {
    if (strcmp(h->sensor[i].name, rec->sensor) != 0) {
      continue;
    }
    if (h->sensor[i].nch != rec->nch) {
      return 0;
    }
    for (int c = 0; c < rec->nch; c++) {
      if (strcmp(h->sensor[i].channel[c], rec->channel[c]) != 0) {
        return 0;
      }
    }
    return 1;
  }
  return 0;
}

static int series_from_log(hil_series *s, const char *path, const char *sensor,
                           const char *channel, char *err, size_t err_sz) {
  hil_log_reader *r = hil_log_reader_open(path, err, err_sz);
  if (!r) {
    return HIL_LOG_EFORMAT;
  }
  const hil_log_header *h = hil_log_reader_header(r);
  int ch = -1;
  for (int i = 0; i < h->nsensors && ch < 0; i++) {
    if (strcmp(h->sensor[i].name, sensor) != 0) {
      continue;
    }
    for (int c = 0; c < h->sensor[i].nch; c++) {
      if (strcmp(h->sensor[i].channel[c], channel) == 0) {
        ch = c;
        snprintf(s->unit, sizeof s->unit, "%s", h->sensor[i].unit[c]);
        snprintf(s->type, sizeof s->type, "%s", h->sensor[i].type);
        s->rate_hz = h->sensor[i].rate_hz;
      }
    }
  }
  if (ch < 0) {
    /* name what there is */
    char list[256] = "";
    int si = -1;
    for (int i = 0; i < h->nsensors; i++) {
      si = strcmp(h->sensor[i].name, sensor) == 0 ? i : si;
    }
    const int n = si >= 0 ? h->sensor[si].nch : h->nsensors;
    for (int i = 0; i < n; i++) {
      const size_t used = strlen(list);
      snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
               si >= 0 ? h->sensor[si].channel[i] : h->sensor[i].name);
    }
    if (si >= 0) {
      snprintf(err, err_sz, "%s: sensor \"%s\" has no channel \"%s\" (channels: %s)", path,
               sensor, channel, list);
    } else {
      snprintf(err, err_sz, "%s: the header lists no sensor \"%s\" (sensors: %s)", path, sensor,
               n ? list : "none");
    }
    hil_log_reader_close(&r);
    return HIL_LOG_ENOTFOUND;
  }
  hil_log_record *rec = malloc(sizeof *rec);
  size_t cap = 0;
  int rc = rec ? 0 : HIL_LOG_EIO;
  char msg[512];
  while (rc == 0) {
    const int k = hil_log_next(r, rec, msg, sizeof msg);
    if (k == 0) {
      break;
    }
    if (k < 0) {
      if (s->skipped++ == 0) {
        snprintf(s->warning, sizeof s->warning, "%s", msg);
      }
      if (k == HIL_LOG_EIO) {
        rc = k;
        snprintf(err, err_sz, "%s", msg);
      }
      continue;
    }
    if (rec->type == HIL_LOG_SAMPLE && !series_matches_header(h, rec)) {
      /* what replay calls damage is counted here too, not skipped in silence */
      snprintf(msg, sizeof msg, "%s: record %lld at byte %lld: sample of \"%s\" does not match "
               "the header's sensors and channels", path, rec->index, rec->offset, rec->sensor);
      if (s->skipped++ == 0) {
        snprintf(s->warning, sizeof s->warning, "%s", msg);
      }
      continue;
    }
    if (rec->type != HIL_LOG_SAMPLE || strcmp(rec->sensor, sensor) != 0 || !rec->valid ||
        ch >= rec->nch || !isfinite(rec->value[ch])) {
      continue;
    }
    rc = series_push(s, &cap, rec->t, rec->value[ch], rec->truth[ch], 1);
    if (rc) {
      snprintf(err, err_sz, "%s: out of memory", path);
    }
  }
  s->end_missing = !hil_log_reader_saw_end(r);
  free(rec);
  hil_log_reader_close(&r);
  return rc;
}

int hil_csv_split(char *line, char **field, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma) {
      *comma = '\0';
    }
    while (*p == ' ' || *p == '\t') {
      p++;
    }
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) {
      *--e = '\0';
    }
    if (n < max) {
      field[n] = p;
    }
    n++;
    if (!comma) {
      return n;
    }
    p = comma + 1;
  }
}

#define CSV_MAX_COLUMNS 1024

int hil_csv_number(const char *cell, double *out) {
  if (!cell[0]) {
    *out = NAN;
    return 0;
  }
  char *end;
  errno = 0;
  *out = strtod(cell, &end);
  return (*end != '\0' || errno == ERANGE || !isfinite(*out)) ? -1 : 0;
}

typedef struct csv_cols {
  int time, value, truth, n;
} csv_cols;

static int csv_header(csv_cols *c, char **field, char *line, const char *path, const char *want,
                      char *err, size_t err_sz) {
  c->n = hil_csv_split(line, field, CSV_MAX_COLUMNS);
  c->time = c->value = c->truth = -1;
  if (c->n > CSV_MAX_COLUMNS) {
    snprintf(err, err_sz, "%s: line 1: more than %d columns", path, CSV_MAX_COLUMNS);
    return HIL_LOG_EFORMAT;
  }
  if (strcmp(field[0], "time") != 0) {
    snprintf(err, err_sz, "%s: line 1: the first column must be \"time\" (got \"%s\")", path,
             field[0]);
    return HIL_LOG_EFORMAT;
  }
  const size_t wl = strlen(want);
  for (int i = 0; i < c->n; i++) {
    const size_t utf8_ok = sim_json_utf8_valid_prefix(field[i]);
    if (field[i][utf8_ok]) {
      snprintf(err, err_sz, "%s: line 1: column %d: name is not valid UTF-8 (at byte %zu)", path,
               i + 1, utf8_ok);
      return HIL_LOG_EFORMAT;
    }
    if (!field[i][0]) {
      snprintf(err, err_sz, "%s: line 1: column %d has no name", path, i + 1);
      return HIL_LOG_EFORMAT;
    }
    for (int k = 0; k < i; k++) {
      if (strcmp(field[k], field[i]) == 0) {
        snprintf(err, err_sz, "%s: line 1: column \"%s\" appears twice (columns %d and %d)",
                 path, field[i], k + 1, i + 1);
        return HIL_LOG_EFORMAT;
      }
    }
    if (strncmp(field[i], want, wl) == 0) {
      const char *rest = field[i] + wl;
      if (!rest[0] || strcmp(rest, ".meas") == 0) {
        c->value = i;
      } else if (strcmp(rest, ".true") == 0) {
        c->truth = i;
      }
    }
  }
  c->time = 0;
  if (c->value < 0) {
    snprintf(err, err_sz, "%s: line 1: no column \"%s\" (or \"%s.meas\")", path, want, want);
    return HIL_LOG_ENOTFOUND;
  }
  return 0;
}

static int series_from_csv(hil_series *s, FILE *f, const char *path, const char *sensor,
                           const char *channel, char *err, size_t err_sz) {
  char want[2 * HIL_LOG_NAME_MAX];
  snprintf(want, sizeof want, "%s.%s", sensor, channel);
  char *line = NULL;
  size_t lcap = 0, cap = 0;
  csv_cols c;
  int rc = 0;
  long long lineno = 1;
  double t_prev = -INFINITY;
  if (getline(&line, &lcap, f) < 0) {
    snprintf(err, err_sz, "%s: empty file (expected a header line \"time,...\")", path);
    free(line);
    return HIL_LOG_EFORMAT;
  }
  char **field = malloc(CSV_MAX_COLUMNS * sizeof *field);
  rc = field ? csv_header(&c, field, line, path, want, err, err_sz) : HIL_LOG_EIO;
  while (rc == 0 && getline(&line, &lcap, f) >= 0) {
    lineno++;
    if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n')) {
      continue; /* blank line */
    }
    const int n = hil_csv_split(line, field, CSV_MAX_COLUMNS);
    if (n != c.n) {
      snprintf(err, err_sz, "%s: line %lld: expected %d fields as in the header, got %d", path,
               lineno, c.n, n);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    double t, v, tr = NAN;
    const int bad_t = hil_csv_number(field[c.time], &t) || isnan(t);
    const int bad_v = hil_csv_number(field[c.value], &v);
    const int bad_tr = c.truth >= 0 && hil_csv_number(field[c.truth], &tr);
    if (bad_t || bad_v || bad_tr) {
      const int col = bad_t ? c.time : bad_v ? c.value : c.truth;
      snprintf(err, err_sz, "%s: line %lld, column %d: expected a number%s (got \"%s\")", path,
               lineno, col + 1, bad_t ? " (time may not be blank)" : " or a blank",
               field[col]);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    if (t < t_prev) { /* docs/logs.md: time increases */
      snprintf(err, err_sz, "%s: line %lld: time %.9g goes back (the row before has %.9g)",
               path, lineno, t, t_prev);
      rc = HIL_LOG_EFORMAT;
      break;
    }
    t_prev = t;
    if (!isnan(v)) {
      rc = series_push(s, &cap, t, v, tr, c.truth >= 0);
    }
  }
  free(field);
  free(line);
  return rc;
}

int hil_series_load(hil_series *s, const char *path, const char *sensor, const char *channel,
                    char *err, size_t err_sz) {
  memset(s, 0, sizeof *s);
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return HIL_LOG_EIO;
  }
  char head[10] = {0};
  const size_t got = fread(head, 1, sizeof head, f);
  int is_log = got == sizeof head && head[8] == ' ' && head[9] == '{';
  for (int i = 0; is_log && i < 8; i++) {
    is_log = hil__log_hexval(head[i]) >= 0;
  }
  int rc;
  if (is_log) {
    fclose(f);
    rc = series_from_log(s, path, sensor, channel, err, err_sz);
  } else {
    rewind(f);
    rc = series_from_csv(s, f, path, sensor, channel, err, err_sz);
    fclose(f);
  }
  if (rc != 0) {
    hil_series_free(s);
  }
  return rc;
}

void hil_series_free(hil_series *s) {
  free(s->t);
  free(s->v);
  free(s->truth);
  s->t = s->v = s->truth = NULL;
  s->n = 0;
}
