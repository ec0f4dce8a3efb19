/* tests/sim/random_tree.c: random kinematic trees as JSON (see random_tree.h). */
#include "random_tree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* --- PRNG -------------------------------------------------------------------------------- */

void rt_rng_init(rt_rng *rng, uint64_t seed) { rng->state = seed; }

uint64_t rt_next(rt_rng *rng) {
  uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double rt_uniform(rt_rng *rng, double lo, double hi) {
  double u = (double)(rt_next(rng) >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * u;
}

int rt_int(rt_rng *rng, int n) { return (int)(rt_next(rng) % (uint64_t)n); }

/* --- text output: a bounded appender that keeps counting past the end -------------------- */

typedef struct rt_out {
  char *buf;
  size_t size;
  size_t len;
} rt_out;

static void out_printf(rt_out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = o->len < o->size ? o->size - o->len : 0;
  int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) o->len += (size_t)n;
}

/* `"key": [v0, v1, ...]`, or only the array when key is NULL */
static void out_vec(rt_out *o, const char *key, const double *v, int n) {
  if (key) out_printf(o, "\"%s\": ", key);
  out_printf(o, "[");
  for (int i = 0; i < n; i++) out_printf(o, "%s%.17g", i ? ", " : "", v[i]);
  out_printf(o, "]");
}

/* --- random geometry --------------------------------------------------------------------- */

/* unit vector with every component at least 0.1 in magnitude: never axis-aligned */
static void random_axis(rt_rng *rng, double a[3]) {
  for (;;) {
    double n2 = 0;
    for (int i = 0; i < 3; i++) {
      a[i] = rt_uniform(rng, -1, 1);
      n2 += a[i] * a[i];
    }
    if (n2 < 0.05 || n2 > 1) continue;
    double n = sqrt(n2);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
      a[i] /= n;
      if (fabs(a[i]) < 0.1) ok = 0;
    }
    if (ok) return;
  }
}

/* uniform random unit quaternion [w x y z] (Shoemake's method) */
static void random_quat(rt_rng *rng, double q[4]) {
  const double two_pi = 6.283185307179586;
  double u1 = rt_uniform(rng, 0, 1), u2 = rt_uniform(rng, 0, 1), u3 = rt_uniform(rng, 0, 1);
  double a = sqrt(1 - u1), b = sqrt(u1);
  q[0] = b * cos(two_pi * u3);
  q[1] = a * sin(two_pi * u2);
  q[2] = a * cos(two_pi * u2);
  q[3] = b * sin(two_pi * u3);
}

/* row-major rotation matrix of a unit quaternion [w x y z] */
static void quat_to_mat(const double q[4], double r[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  r[0] = 1 - 2 * (y * y + z * z);
  r[1] = 2 * (x * y - w * z);
  r[2] = 2 * (x * z + w * y);
  r[3] = 2 * (x * y + w * z);
  r[4] = 1 - 2 * (x * x + z * z);
  r[5] = 2 * (y * z - w * x);
  r[6] = 2 * (x * z - w * y);
  r[7] = 2 * (y * z + w * x);
  r[8] = 1 - 2 * (x * x + y * y);
}

/* full inertia tensor about the COM: principal moments from positive second moments
 * sx, sy, sz of a mass cloud (I1 = m(sy+sz), ...), so the triangle inequality holds strictly,
 * then rotated into body axes as R·diag·Rᵀ */
static void random_inertia(rt_rng *rng, double mass, double inertia[9]) {
  double s[3], p[3], q[4], r[9];
  for (int i = 0; i < 3; i++) s[i] = rt_uniform(rng, 0.002, 0.03);
  p[0] = mass * (s[1] + s[2]);
  p[1] = mass * (s[0] + s[2]);
  p[2] = mass * (s[0] + s[1]);
  random_quat(rng, q);
  quat_to_mat(q, r);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += r[3 * i + k] * p[k] * r[3 * j + k];
      inertia[3 * i + j] = v;
    }
  /* exact symmetry, whatever the rounding of the two triple products */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < i; j++) inertia[3 * j + i] = inertia[3 * i + j];
}

/* --- one body ---------------------------------------------------------------------------- */

typedef struct rt_body {
  int parent;            /* 0 = world, else 1-based body index */
  int type;              /* 0 fixed, 1 hinge, 2 slide, 3 ball, 4 free */
  double pos[3], quat[4], axis[3];
  double damping, armature, stiffness, springref;
  double mass, com[3], inertia[9];
} rt_body;

static void draw_body(rt_rng *rng, const rt_spec *spec, int i, rt_body *b) {
  /* half the time extend a chain (deep trees), else branch from any earlier body or the world */
  b->parent = (i == 1) ? 0 : (rt_int(rng, 2) ? i - 1 : rt_int(rng, i));
  int t = rt_int(rng, 8);
  b->type = (spec->fixed && i > 1 && t == 0) ? 0 : (t < 3 ? 2 : 1);
  for (int k = 0; k < 3; k++) b->pos[k] = rt_uniform(rng, -0.3, 0.3);
  random_quat(rng, b->quat);
  random_axis(rng, b->axis);
  b->damping = spec->passive ? rt_uniform(rng, 0, 0.5) : 0;
  b->stiffness = spec->passive ? rt_uniform(rng, 0, 3) : 0;
  b->springref = spec->passive ? rt_uniform(rng, -0.5, 0.5) : 0;
  b->armature = spec->armature ? rt_uniform(rng, 0, 0.05) : 0;
  b->mass = rt_uniform(rng, 0.2, 2.0);
  for (int k = 0; k < 3; k++) b->com[k] = rt_uniform(rng, -0.2, 0.2);
  random_inertia(rng, b->mass, b->inertia);
  if (spec->free_root && i == 1) {
    b->type = 4;
  } else if (spec->ball && i > 1 && b->type != 0 && rt_int(rng, 5) == 0) {
    b->type = 3;
  }
  if (b->type >= 3) b->stiffness = b->springref = 0; /* not modelled on ball and free joints */
}

/* an actuator on body i's hinge or slide (about half of them), drawn only with spec->actuators */
static void write_actuator(rt_out *o, rt_rng *rng, int i, int *count) {
  if (rt_int(rng, 2)) return;
  static const char *const types[] = {"motor", "position_servo", "velocity_servo", "dc_motor",
                                      "dc_motor"};
  int t = rt_int(rng, 5);
  out_printf(o, "%s\n    {\"name\": \"a%d\", \"joint\": \"j%d\", \"type\": \"%s\"",
             *count ? "," : "", i, i, types[t]);
  double gear = rt_uniform(rng, 0.5, 3);
  switch (t) {
  case 0: out_printf(o, ", \"gear\": %.17g", gear); break;
  case 1:
    out_printf(o, ", \"kp\": %.17g, \"kd\": %.17g", rt_uniform(rng, 1, 20), rt_uniform(rng, 0, 1));
    break;
  case 2: out_printf(o, ", \"kv\": %.17g", rt_uniform(rng, 0.5, 5)); break;
  default: /* a DC motor: a large current limit, so that it does not clamp at random states */
    out_printf(o, ", \"gear\": %.17g, \"input\": \"voltage\", \"supply_voltage\": 12, "
               "\"resistance\": %.17g, \"kt\": %.17g, \"ke\": %.17g, \"current_limit\": 1000",
               gear, rt_uniform(rng, 0.5, 4), rt_uniform(rng, 0.01, 0.1), rt_uniform(rng, 0.01, 0.1));
    if (t == 4) out_printf(o, ", \"inductance\": %.17g", rt_uniform(rng, 1e-3, 1e-2));
    break;
  }
  out_printf(o, "}");
  (*count)++;
}

static void write_body(rt_out *o, int i, const rt_body *b, int last) {
  static const char *const types[] = {"fixed", "hinge", "slide", "ball", "free"};
  out_printf(o, "    {\"name\": \"b%d\", ", i);
  if (b->parent) out_printf(o, "\"parent\": \"b%d\", ", b->parent);
  else out_printf(o, "\"parent\": \"world\", ");
  out_vec(o, "pos", b->pos, 3);
  out_printf(o, ", ");
  out_vec(o, "quat", b->quat, 4);
  out_printf(o, ",\n      \"joint\": {\"name\": \"j%d\", \"type\": \"%s\"", i, types[b->type]);
  if (b->type == 1 || b->type == 2) {
    out_printf(o, ", ");
    out_vec(o, "axis", b->axis, 3);
    out_printf(o, ", \"damping\": %.17g, \"armature\": %.17g, \"stiffness\": %.17g, "
               "\"springref\": %.17g", b->damping, b->armature, b->stiffness, b->springref);
  } else if (b->type >= 3) {
    out_printf(o, ", \"damping\": %.17g, \"armature\": %.17g", b->damping, b->armature);
  }
  out_printf(o, "},\n      \"inertial\": {\"mass\": %.17g, ", b->mass);
  out_vec(o, "com", b->com, 3);
  out_printf(o, ", \"inertia\": [");
  for (int r = 0; r < 3; r++) {
    out_printf(o, "%s", r ? ", " : "");
    out_vec(o, NULL, b->inertia + 3 * r, 3);
  }
  out_printf(o, "]}}%s\n", last ? "" : ",");
}

size_t rt_tree_json(char *buf, size_t bufsz, uint64_t seed, const rt_spec *spec) {
  rt_rng rng;
  rt_rng_init(&rng, seed);
  rt_out o = {buf, bufsz, 0};
  int n = spec->nbody < 1 ? 1 : (spec->nbody > RT_MAX_BODIES ? RT_MAX_BODIES : spec->nbody);

  /* gravity: fixed magnitude, random direction */
  double g[3] = {0, 0, 0};
  if (spec->gravity) {
    random_axis(&rng, g);
    for (int k = 0; k < 3; k++) g[k] *= 9.81;
  }
  out_printf(&o, "{\n  \"name\": \"random_tree_%llu\",\n  \"timestep\": 0.001,\n"
             "  \"integrator\": \"rk4\",\n  ", (unsigned long long)seed);
  out_vec(&o, "gravity", g, 3);
  out_printf(&o, ",\n  \"bodies\": [\n");
  int type[RT_MAX_BODIES + 1];
  for (int i = 1; i <= n; i++) {
    rt_body b;
    draw_body(&rng, spec, i, &b);
    if (i == spec->scale_body) b.mass *= spec->scale_mass;
    write_body(&o, i, &b, i == n);
    type[i] = b.type;
  }
  out_printf(&o, "  ]");
  if (spec->actuators) {
    int count = 0;
    out_printf(&o, ",\n  \"actuators\": [");
    for (int i = 1; i <= n; i++) {
      if (type[i] == 1 || type[i] == 2) write_actuator(&o, &rng, i, &count);
    }
    out_printf(&o, "]");
  }
  out_printf(&o, "\n}\n");
  return o.len;
}
