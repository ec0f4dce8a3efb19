/* sim/import/mjcf_frame.c: MJCF orientations (quat, axisangle, euler, xyaxes, zaxis) and the
 * frames that place a child in its native parent body. */
#include <math.h>
#include <string.h>

#include "sim/import/mjcf_state.h"

#define PI 3.14159265358979323846

const mjcf_frame mjcf__identity_frame = {{0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {1, 0, 0, 0}};

double mjcf__angle(const mjcf *m, double a) { return m->degree ? a / 180.0 * PI : a; }

void mjcf__normalize(double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += v[i] * v[i];
  }
  s = sqrt(s);
  for (int i = 0; i < n && s > 0; i++) {
    v[i] /= s;
  }
}

/* the minimal rotation taking z to v (v unit), as MuJoCo builds a frame from one axis */
void mjcf__z_to_quat(double q[4], const double v[3]) {
  double axis[3] = {-v[1], v[0], 0}; /* z × v */
  double s = sqrt(axis[0] * axis[0] + axis[1] * axis[1]);
  if (s < 1e-10) {
    axis[0] = 1, axis[1] = 0;
  } else {
    axis[0] /= s, axis[1] /= s;
  }
  double a = atan2(s, v[2]);
  q[0] = cos(a / 2);
  q[1] = axis[0] * sin(a / 2), q[2] = axis[1] * sin(a / 2), q[3] = 0;
}

static int euler_to_quat(mjcf *m, const xmlNode *el, double q[4], const double e[3]) {
  q[0] = 1, q[1] = q[2] = q[3] = 0;
  for (int i = 0; i < 3; i++) {
    const char axis = m->eulerseq[i];
    double a = mjcf__angle(m, e[i]), r[4] = {cos(a / 2), 0, 0, 0};
    const int k = axis == 'x' || axis == 'X' ? 1 : axis == 'y' || axis == 'Y' ? 2 : 3;
    r[k] = sin(a / 2);
    if (axis >= 'a') { /* lower case: moving axes, post-multiply */
      imp__quat_mul(q, q, r);
    } else {
      imp__quat_mul(q, r, q);
    }
  }
  (void)el;
  mjcf__normalize(q, 4);
  return 0;
}

/* quat, axisangle, euler, xyaxes or zaxis (at most one), or the identity */
int mjcf__orientation(mjcf *m, const xmlNode *el, const char *kind, const char *cls,
                      double q[4]) {
  static const char *const alts[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis"};
  int given = 0;
  for (int i = 0; i < 5; i++) {
    given += imp__attr(el, alts[i]) != NULL;
  }
  if (given > 1) {
    return imp__fail(m->c, el, "<%s>: give one of quat, axisangle, euler, xyaxes, zaxis",
                     imp__name(el));
  }
  double v[6];
  q[0] = 1, q[1] = q[2] = q[3] = 0;
  if (given) { /* the element's own choice hides every alternative its defaults give */
    kind = "";
  }
  if (mjcf__numbers(m, el, kind, cls, "quat", v, 4, 4) == 4) {
    memcpy(q, v, 4 * sizeof *v);
    mjcf__normalize(q, 4);
  } else if (mjcf__numbers(m, el, kind, cls, "axisangle", v, 4, 4) == 4) {
    mjcf__normalize(v, 3);
    double a = mjcf__angle(m, v[3]);
    q[0] = cos(a / 2), q[1] = v[0] * sin(a / 2), q[2] = v[1] * sin(a / 2), q[3] = v[2] * sin(a / 2);
  } else if (mjcf__numbers(m, el, kind, cls, "euler", v, 3, 3) == 3) {
    euler_to_quat(m, el, q, v);
  } else if (mjcf__numbers(m, el, kind, cls, "zaxis", v, 3, 3) == 3) {
    mjcf__normalize(v, 3);
    mjcf__z_to_quat(q, v);
  } else if (mjcf__numbers(m, el, kind, cls, "xyaxes", v, 6, 6) == 6) {
    double *x = v, *y = v + 3, z[3], R[9];
    mjcf__normalize(x, 3);
    double d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    for (int i = 0; i < 3; i++) {
      y[i] -= d * x[i];
    }
    mjcf__normalize(y, 3);
    z[0] = x[1] * y[2] - x[2] * y[1], z[1] = x[2] * y[0] - x[0] * y[2];
    z[2] = x[0] * y[1] - x[1] * y[0];
    for (int i = 0; i < 3; i++) { /* axes are the columns */
      R[3 * i] = x[i], R[3 * i + 1] = y[i], R[3 * i + 2] = z[i];
    }
    imp__mat_to_quat(q, R);
  }
  return m->c->failed ? -1 : 0;
}

/* frame f followed by a child placed at (pos, q) in it */
void mjcf__frame_child(mjcf_frame *out, const mjcf_frame *f, const double pos[3], const double q[4]) {
  double p[3];
  imp__rotate(p, f->R, pos);
  for (int i = 0; i < 3; i++) {
    out->t[i] = f->t[i] + p[i];
  }
  imp__quat_mul(out->q, f->q, q);
  mjcf__normalize(out->q, 4);
  imp__quat_to_mat(out->R, out->q);
}

void mjcf__frame_point(double out[3], const mjcf_frame *f, const double x[3]) {
  imp__rotate(out, f->R, x);
  for (int i = 0; i < 3; i++) {
    out[i] += f->t[i];
  }
}
