/* sysid/series_csv.c: a CSV of a real arm as a series, through a column map (series.h,
 * docs/sysid.md section 2). Lines are split and cells parsed by the CSV code every reader of
 * Achilles shares (hil/record/log.h: hil_csv_split, hil_csv_number). */
#define _POSIX_C_SOURCE 200809L /* getline, strdup */
#include "sysid/series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/record/log.h"

#define CSV_MAX_COLUMNS 1024
#define TWO_PI 6.283185307179586

enum { USE_TIME = 0, USE_JOINT = 1, USE_ACT = 2 };

/* one column read: what it is and how its cells become the series' units */
typedef struct csv_use {
  int kind;          /* USE_TIME, USE_JOINT, USE_ACT */
  int element;       /* joint or actuator index in the model */
  int slot;          /* index in the series' joints or actuators */
  int column;        /* 0-based column in the file, -1 until the header is read */
  double factor;     /* value = cell · factor */
  char name[SIM_NAME_MAX], col[128], entry[256];
} csv_use;

typedef struct csv_plan {
  int nuse;
  csv_use *use;      /* time first */
} csv_plan;

/* a joint the fit can read: one degree of freedom */
static int reading_joint(const sim_model *m, const char *name) {
  const int j = sim_model_joint(m, name);
  return j >= 0 && sim_joint_nv(m->joints[j].type) == 1 && m->joints[j].qposadr >= 0 ? j : -1;
}

static void list_names(char *out, size_t sz, const sim_model *m, int joints) {
  out[0] = '\0';
  const int n = joints ? m->njnt : m->nu;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (joints && reading_joint(m, m->joints[i].name) < 0) {
      continue;
    }
    const size_t used = strlen(out);
    snprintf(out + used, sz - used, "%s%s", k++ ? ", " : "",
             joints ? m->joints[i].name : m->actuators[i].name);
  }
  if (!k) {
    snprintf(out, sz, "none");
  }
}

/* "NAME=COLUMN", "NAME=COLUMN*K" or "NAME=COLUMN/N" into u (kind, element, factor, col) */
static int parse_entry(csv_use *u, const char *entry, const sim_model *m, char *err,
                       size_t err_sz) {
  snprintf(u->entry, sizeof u->entry, "%s", entry);
  const char *eq = strchr(entry, '=');
  if (!eq || eq == entry || !eq[1]) {
    snprintf(err, err_sz, "--map: \"%s\": expected NAME=COLUMN, NAME=COLUMN*FACTOR or "
             "JOINT=COLUMN/COUNTS_PER_TURN", entry);
    return -1;
  }
  snprintf(u->name, sizeof u->name, "%.*s", (int)(eq - entry), entry);
  snprintf(u->col, sizeof u->col, "%s", eq + 1);
  u->factor = 1.0;
  u->column = -1;
  char *op = strpbrk(u->col, "*/");
  if (op) {
    const char kind = *op;
    *op = '\0';
    char *end;
    const double k = strtod(op + 1, &end);
    if (!op[1] || *end || !isfinite(k) || k == 0 || (kind == '/' && !(k > 0))) {
      snprintf(err, err_sz, "--map: \"%s\": expected a %s after '%c' (got \"%s\")", entry,
               kind == '*' ? "finite nonzero factor" : "positive number of counts a turn", kind,
               op + 1);
      return -1;
    }
    u->factor = kind == '*' ? k : TWO_PI / k;
  }
  if (!u->col[0]) {
    snprintf(err, err_sz, "--map: \"%s\": no column name", entry);
    return -1;
  }
  if (strcmp(u->name, "time") == 0) {
    u->kind = USE_TIME;
    return 0;
  }
  if ((u->element = reading_joint(m, u->name)) >= 0) {
    u->kind = USE_JOINT;
  } else if ((u->element = sim_model_actuator(m, u->name)) >= 0) {
    u->kind = USE_ACT;
  } else {
    char joints[1024], acts[1024];
    list_names(joints, sizeof joints, m, 1);
    list_names(acts, sizeof acts, m, 0);
    snprintf(err, err_sz, "--map: \"%s\": %s is neither \"time\", a joint nor an actuator of %s "
             "(joints: %s; actuators: %s)", entry, u->name, m->name, joints, acts);
    return -1;
  }
  if (u->kind == USE_ACT && strchr(eq + 1, '/')) {
    snprintf(err, err_sz, "--map: \"%s\": COLUMN/COUNTS_PER_TURN is for a joint's encoder; an "
             "actuator's input takes COLUMN*FACTOR", entry);
    return -1;
  }
  return 0;
}

static int plan_add(csv_plan *p, const csv_use *u, char *err, size_t err_sz) {
  for (int i = 0; i < p->nuse; i++) {
    if (p->use[i].kind == u->kind && (u->kind == USE_TIME || p->use[i].element == u->element)) {
      snprintf(err, err_sz, "--map: %s is mapped twice (\"%s\" and \"%s\")", u->name,
               p->use[i].entry, u->entry);
      return -1;
    }
  }
  csv_use *nu = realloc(p->use, (size_t)(p->nuse + 1) * sizeof *nu);
  if (!nu) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  p->use = nu;
  p->use[p->nuse++] = *u;
  return 0;
}

/* the map's entries, or (map NULL or "") the default: columns named as joints and actuators */
static int plan_from_map(csv_plan *p, const char *map, const sim_model *m, char **field,
                         int nfield, char *err, size_t err_sz) {
  csv_use u = {USE_TIME, -1, 0, -1, 1.0, "time", "time", "time (default)"};
  int have_time = 0;
  if (map && map[0]) {
    char *copy = strdup(map), *save = NULL;
    if (!copy) {
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
      csv_use v;
      if (parse_entry(&v, e, m, err, err_sz) != 0 || plan_add(p, &v, err, err_sz) != 0) {
        free(copy);
        return -1;
      }
      have_time |= v.kind == USE_TIME;
    }
    free(copy);
    return have_time ? 0 : plan_add(p, &u, err, err_sz);
  }
  if (plan_add(p, &u, err, err_sz) != 0) {
    return -1;
  }
  for (int c = 0; c < nfield; c++) {
    csv_use v = {USE_JOINT, reading_joint(m, field[c]), 0, -1, 1.0, "", "", ""};
    if (v.element < 0) {
      v.kind = USE_ACT;
      v.element = sim_model_actuator(m, field[c]);
    }
    if (v.element < 0) {
      continue;
    }
    snprintf(v.name, sizeof v.name, "%s", field[c]);
    snprintf(v.col, sizeof v.col, "%s", field[c]);
    snprintf(v.entry, sizeof v.entry, "%s (default)", field[c]);
    if (plan_add(p, &v, err, err_sz) != 0) {
      return -1;
    }
  }
  return 0;
}

/* finds each planned column in the header line; fills the series' names */
static int plan_columns(csv_plan *p, sysid_series *s, const sim_model *m, char **field,
                        int nfield, const char *path, const char *map, char *err,
                        size_t err_sz) {
  for (int i = 0; i < p->nuse; i++) {
    csv_use *u = &p->use[i];
    for (int c = 0; c < nfield && u->column < 0; c++) {
      u->column = strcmp(field[c], u->col) == 0 ? c : -1;
    }
    if (u->column < 0) {
      snprintf(err, err_sz, "%s: line 1: no column \"%s\" (%s)", path, u->col,
               u->kind == USE_TIME && !(map && map[0]) ? "the time column; name another with "
               "--map time=COLUMN" : u->entry);
      return -1;
    }
    if (u->kind != USE_TIME) {
      u->slot = u->kind == USE_JOINT ? s->njoint++ : s->nact++;
    }
  }
  if (s->njoint == 0) {
    char joints[1024];
    list_names(joints, sizeof joints, m, 1);
    snprintf(err, err_sz, "%s: line 1: no column is a joint's reading (the joints of %s: %s); "
             "name them with --map JOINT=COLUMN", path, m->name, joints);
    return -1;
  }
  s->joint_name = calloc((size_t)s->njoint, sizeof *s->joint_name);
  s->act_name = calloc((size_t)s->nact + 1, sizeof *s->act_name);
  if (!s->joint_name || !s->act_name) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int i = 0; i < p->nuse; i++) {
    const csv_use *u = &p->use[i];
    if (u->kind == USE_JOINT) {
      s->joint_name[u->slot] = strdup(m->joints[u->element].name);
    } else if (u->kind == USE_ACT) {
      s->act_name[u->slot] = strdup(m->actuators[u->element].name);
    }
    if (u->kind != USE_TIME &&
        !(u->kind == USE_JOINT ? s->joint_name[u->slot] : s->act_name[u->slot])) {
      snprintf(err, err_sz, "out of memory");
      return -1;
    }
  }
  return 0;
}

/* one data row into (t, q, u); u holds the row before's inputs where this row's are blank */
static int read_row(const csv_plan *p, char **field, double *t, double *q, double *u,
                    const char *path, long long lineno, const sysid_series *s, char *err,
                    size_t err_sz) {
  for (int i = 0; i < p->nuse; i++) {
    const csv_use *use = &p->use[i];
    const char *cell = field[use->column];
    double v;
    if (hil_csv_number(cell, &v) != 0 || (use->kind == USE_TIME && isnan(v)) ||
        !isfinite(isnan(v) ? 0 : v * use->factor)) {
      snprintf(err, err_sz, "%s: line %lld, column %d (\"%s\"): expected a finite number%s "
               "(got \"%s\")", path, lineno, use->column + 1, use->col,
               use->kind == USE_TIME ? " (time may not be blank)" : " or a blank", cell);
      return -1;
    }
    if (use->kind == USE_TIME) {
      *t = v * use->factor;
    } else if (use->kind == USE_JOINT) {
      q[use->slot] = v * use->factor; /* NAN stays NAN: a missing reading */
    } else if (!isnan(v)) {
      u[use->slot] = v * use->factor;
    }
  }
  (void)s;
  return 0;
}

static int read_rows(sysid_series *s, FILE *f, const csv_plan *p, int nfield, char **field,
                     char **line, size_t *lcap, const char *path, char *err, size_t err_sz) {
  double *q = malloc((size_t)s->njoint * sizeof *q), *u = calloc((size_t)s->nact + 1, sizeof *u);
  int cap = 0, rc = q && u ? 0 : -1;
  long long lineno = 1, prev_line = 0;
  double t = 0, t_prev = -INFINITY;
  if (rc) {
    snprintf(err, err_sz, "out of memory");
  }
  while (rc == 0 && getline(line, lcap, f) >= 0) {
    lineno++;
    const char *l = *line;
    if (l[0] == '\n' || (l[0] == '\r' && l[1] == '\n') || !l[0]) {
      continue; /* blank line */
    }
    const int n = hil_csv_split(*line, field, CSV_MAX_COLUMNS);
    if (n != nfield) {
      snprintf(err, err_sz, "%s: line %lld: expected %d fields as in the header, got %d", path,
               lineno, nfield, n);
      rc = -1;
      break;
    }
    rc = read_row(p, field, &t, q, u, path, lineno, s, err, err_sz);
    if (rc == 0 && !(t > t_prev)) {
      /* the fit steps forward in time: equal or decreasing times are a logger's error */
      snprintf(err, err_sz, "%s: line %lld: time %.9g is not after the row before's %.9g "
               "(line %lld); times must increase", path, lineno, t, t_prev, prev_line);
      rc = -1;
    }
    if (rc == 0 && sysid_series_push(s, &cap, t, q, u) != 0) {
      snprintf(err, err_sz, "%s: out of memory at line %lld", path, lineno);
      rc = -1;
    }
    t_prev = t;
    prev_line = lineno;
  }
  if (rc == 0 && s->n < 2) {
    snprintf(err, err_sz, "%s: %d data row%s: a series needs at least two", path, s->n,
             s->n == 1 ? "" : "s");
    rc = -1;
  }
  free(q);
  free(u);
  return rc;
}

int sysid_series_load_csv(sysid_series *s, const char *path, const sim_model *m, const char *map,
                          char *err, size_t err_sz) {
  memset(s, 0, sizeof *s);
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return -1;
  }
  snprintf(s->source, sizeof s->source, "%s", path);
  char *line = NULL, **field = malloc(CSV_MAX_COLUMNS * sizeof *field);
  size_t lcap = 0;
  csv_plan plan = {0, NULL};
  int rc = -1, nfield = 0;
  if (!field) {
    snprintf(err, err_sz, "out of memory");
  } else if (getline(&line, &lcap, f) < 0) {
    snprintf(err, err_sz, "%s: empty file (expected a header line of column names)", path);
  } else if ((nfield = hil_csv_split(line, field, CSV_MAX_COLUMNS)) > CSV_MAX_COLUMNS) {
    snprintf(err, err_sz, "%s: line 1: more than %d columns", path, CSV_MAX_COLUMNS);
  } else if (plan_from_map(&plan, map, m, field, nfield, err, err_sz) == 0 &&
             plan_columns(&plan, s, m, field, nfield, path, map, err, err_sz) == 0) {
    rc = read_rows(s, f, &plan, nfield, field, &line, &lcap, path, err, err_sz);
  }
  free(plan.use);
  free(field);
  free(line);
  fclose(f);
  if (rc != 0) {
    sysid_series_free(s);
  }
  return rc;
}
