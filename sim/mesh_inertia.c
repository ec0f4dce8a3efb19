/* sim/mesh_inertia.c: a mesh file's triangles (STL or Wavefront OBJ) and the mass properties
 * MuJoCo 2.2.2's compiler gives a mesh geom (src/user/user_mesh.cc, mjCMesh::Process), with
 * <compiler exactmeshinertia="false">, its default, or "true".
 *
 * MuJoCo keeps vertices as floats: scaled in place (float = float·double), re-centred at the
 * centre of mass (float −= double), each triangle's centre a float sum. We do the same, so the
 * numbers are MuJoCo's to rounding of the double sums. Its steps:
 *   1. the area-weighted centre of the faces, c_f;
 *   2. the centre of mass from pyramids c_f → face, volumes |n·(c−c_f)|·area/3, unsigned (2.2.2
 *      takes them so, and signed under exactmeshinertia: measured on its mug sample, where the
 *      other choice moves the mass by 1.5e-2 and 1.1e-8), each pyramid's centroid 3/4 of the way
 *      to the face centre;
 *   3. vertices re-centred there; products of inertia P_ij = Σ ρ·vol/20·(2ΣD_iD_j + cross
 *      terms) over pyramids origin → face (vol unsigned again, signed under exactmeshinertia);
 *   4. I = [P11+P22, P00+P22, P00+P11; −P01, −P02, −P12], its eigenvalues e, and the
 *      "equivalent inertia box" b_k = √(6(e_i+e_j−e_k)/m)/2 for m = ρ·Σ|vol|;
 *   5. the geom's volume is the box's, 8·b0·b1·b2 (the mesh's own, Σvol, under
 *      exactmeshinertia), its mass ρ_geom times that (or the mass given), its principal moments
 *      mass·(b_j²+b_k²)/3 along I's axes, its frame moved to the centre of mass.
 * Load time only: this allocates.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/file_read.h"
#include "sim/mesh.h"

/* --- reading ---------------------------------------------------------------------------------- */

#define OBJ_BYTES_MAX ((size_t)512 << 20)

/* the vertex index of an OBJ face corner ("7", "7/2", "7//3", "-1"): 0-based, or -1 */
static long obj_index(const char *word, long nvert) {
  char *end;
  long i = strtol(word, &end, 10);
  if (end == word) {
    return -1;
  }
  i = i < 0 ? nvert + i : i - 1; /* negative: counted back from the last vertex read */
  return i >= 0 && i < nvert ? i : -1;
}

typedef struct grow {
  void *p;
  size_t n, cap, size; /* items, capacity, item size */
} grow;

static void *grow_push(grow *g) {
  if (g->n == g->cap) {
    const size_t cap = g->cap ? 2 * g->cap : 1024;
    void *p = realloc(g->p, cap * g->size);
    if (!p) {
      return NULL;
    }
    g->p = p;
    g->cap = cap;
  }
  return (char *)g->p + g->size * g->n++;
}

/* Wavefront OBJ as MuJoCo reads it (tinyobjloader, the first shape): `v x y z` lines, and `f`
 * lines of 3 or 4 corners (a quad is the triangles 0 1 2 and 0 2 3); more corners are an error,
 * as in MuJoCo; a second object or group after faces ends the first shape. */
int sim_obj_parse(float **tri, int *ntri, char *text, const char *name, char *err,
                  size_t err_sz) {
  grow v = {NULL, 0, 0, 3 * sizeof(float)}, t = {NULL, 0, 0, 9 * sizeof(float)};
  long line = 0;
  int rc = 0;
  for (char *s = text, *next; s && *s && rc == 0; s = next) {
    next = strchr(s, '\n');
    if (next) {
      *next++ = '\0';
    }
    line++;
    while (*s == ' ' || *s == '\t') {
      s++;
    }
    if ((s[0] == 'o' || s[0] == 'g') && (s[1] == ' ' || s[1] == '\t') && t.n > 0) {
      break; /* MuJoCo takes the first shape only */
    }
    if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
      float *p = grow_push(&v);
      char *end = s + 1;
      for (int k = 0; p && k < 3; k++) {
        char *from = end;
        p[k] = strtof(from, &end);
        if (end == from || !isfinite(p[k])) {
          snprintf(err, err_sz, "%s:%ld: a vertex needs three finite numbers", name, line);
          rc = -1;
        }
      }
      rc = p ? rc : -1;
    } else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
      long c[5];
      int n = 0;
      char *save = NULL;
      for (char *w = strtok_r(s + 1, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
        const int many = n == 4;
        if (many || (c[n++] = obj_index(w, (long)v.n)) < 0) {
          snprintf(err, err_sz, "%s:%ld: %s", name, line,
                   many ? "only triangles and quads are read (as MuJoCo)"
                        : "a face corner names no vertex read before it");
          rc = -1;
          break;
        }
      }
      if (rc == 0 && n < 3) {
        snprintf(err, err_sz, "%s:%ld: a face needs three corners", name, line);
        rc = -1;
      }
      for (int q = 0; rc == 0 && q < n - 2; q++) {
        float *p = grow_push(&t);
        const long k3[3] = {c[0], c[q + 1], c[q + 2]};
        for (int k = 0; p && k < 3; k++) {
          memcpy(p + 3 * k, (float *)v.p + 3 * k3[k], 3 * sizeof(float));
        }
        rc = p ? 0 : -1;
      }
    }
  }
  free(v.p);
  if (rc == 0 && t.n == 0) {
    snprintf(err, err_sz, "%s: no faces", name);
    rc = -1;
  }
  if (rc != 0 || t.n > SIM_STL_TRIANGLES_MAX) {
    if (rc == 0) {
      snprintf(err, err_sz, "%s: more than %d triangles", name, SIM_STL_TRIANGLES_MAX);
    }
    free(t.p);
    return -1;
  }
  *tri = t.p;
  *ntri = (int)t.n;
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  const size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

int sim_mesh_read(float **tri, int *ntri, const char *path, char *err, size_t err_sz) {
  const int obj = ends_with(path, ".obj");
  if (!obj && !ends_with(path, ".stl")) {
    snprintf(err, err_sz, "%s: only STL and OBJ meshes are read", path);
    return -1;
  }
  size_t size = 0;
  const size_t max = obj ? OBJ_BYTES_MAX : 84 + 50 * (size_t)SIM_STL_TRIANGLES_MAX * 4;
  char *data = sim_file_read(path, 0, max, &size, err, err_sz);
  if (!data) {
    return -1;
  }
  const int rc = obj ? sim_obj_parse(tri, ntri, data, path, err, err_sz)
                     : sim_stl_parse(tri, ntri, (unsigned char *)data, size, path, err, err_sz);
  free(data);
  return rc;
}

/* --- mass properties -------------------------------------------------------------------------- */

/* MuJoCo's mju_eig3 (src/engine/engine_util_solve.c), step for step: Jacobi rotations kept as
 * a quaternion, stopped at an off-diagonal below 1e-12 or a cosine above 1 − 1e-12, eigenvalues
 * sorted decreasing. Its stop leaves the axes off by up to ~1e-8 relative; a mesh geom's inertia
 * is MuJoCo's diagonal along these axes, so a body of several geoms has MuJoCo's moments to
 * rounding (with exact axes it would differ by 1.5e-8: tests/sim/test_import_mesh_mass.c). */
static void quat_mat(double R[9], const double q[4]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = w * w + x * x - y * y - z * z, R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = w * w - x * x + y * y - z * z, R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = w * w - x * x - y * y + z * z;
}

static void quat_mul(double out[4], const double a[4], const double b[4]) {
  const double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                       a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                       a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                       a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(out, r, sizeof r);
}

static void quat_normalize(double q[4]) {
  const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n < 1e-15) {
    q[0] = 1, q[1] = q[2] = q[3] = 0;
    return;
  }
  for (int k = 0; k < 4; k++) {
    q[k] /= n;
  }
}

static void eig3(double e[3], double R[9], const double I[9]) {
  double q[4] = {1, 0, 0, 0}, D[9], tmp[9], r[4];
  for (int iter = 0; iter < 500; iter++) {
    quat_mat(R, q);
    for (int i = 0; i < 3; i++) { /* tmp = Rᵀ·I, D = tmp·R */
      for (int j = 0; j < 3; j++) {
        tmp[3 * i + j] = R[i] * I[j] + R[3 + i] * I[3 + j] + R[6 + i] * I[6 + j];
      }
    }
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        D[3 * i + j] = tmp[3 * i] * R[j] + tmp[3 * i + 1] * R[3 + j] + tmp[3 * i + 2] * R[6 + j];
      }
    }
    e[0] = D[0], e[1] = D[4], e[2] = D[8];
    int rk, ck, rotk;
    if (fabs(D[1]) > fabs(D[2]) && fabs(D[1]) > fabs(D[5])) {
      rk = 0, ck = 1, rotk = 2;
    } else if (fabs(D[2]) > fabs(D[5])) {
      rk = 0, ck = 2, rotk = 1;
    } else {
      rk = 1, ck = 2, rotk = 0;
    }
    if (fabs(D[3 * rk + ck]) < 1e-12) {
      break;
    }
    const double tau = (D[4 * ck] - D[4 * rk]) / (2 * D[3 * rk + ck]);
    const double t = tau >= 0 ? 1.0 / (tau + sqrt(1 + tau * tau))
                              : -1.0 / (-tau + sqrt(1 + tau * tau));
    const double c = 1.0 / sqrt(1 + t * t);
    if (c > 1.0 - 1e-12) {
      break;
    }
    r[1] = r[2] = r[3] = 0;
    r[rotk + 1] = tau >= 0 ? -sqrt(0.5 - 0.5 * c) : sqrt(0.5 - 0.5 * c);
    if (rotk == 1) {
      r[rotk + 1] = -r[rotk + 1];
    }
    r[0] = sqrt(1.0 - r[rotk + 1] * r[rotk + 1]);
    quat_normalize(r);
    quat_mul(q, q, r);
    quat_normalize(q);
  }
  for (int j = 0; j < 3; j++) { /* decreasing (bubble sort 0, 1, 0), turning the quaternion */
    const int j1 = j % 2;
    if (e[j1] < e[j1 + 1]) {
      const double t = e[j1];
      e[j1] = e[j1 + 1], e[j1 + 1] = t;
      r[0] = 0.707106781186548;
      r[1] = r[2] = r[3] = 0;
      r[(j1 + 2) % 3 + 1] = r[0];
      quat_mul(q, q, r);
      quat_normalize(q);
    }
  }
  quat_mat(R, q);
}

void sim__principal_moments(double e[3], const double I[9]) {
  double R[9];
  eig3(e, R, I);
}

int sim_mesh_inertia(sim_mesh_mass *out, const float *tri_in, int ntri, const double scale[3],
                     int exact, const char *name, char *err, size_t err_sz) {
  memset(out, 0, sizeof *out);
  float *tri = malloc((size_t)ntri * 9 * sizeof(float));
  if (!tri) {
    snprintf(err, err_sz, "%s: out of memory", name);
    return -1;
  }
  for (int i = 0; i < 9 * ntri; i++) {
    const double v = tri_in[i] * scale[i % 3];
    if (!(fabs(v) <= 1e30)) { /* a float then, and its differences too */
      free(tri);
      snprintf(err, err_sz, "%s: a vertex coordinate, scaled, is %g (beyond 1e30)", name, v);
      return -1;
    }
    tri[i] = (float)v;
  }
  /* 1, 2: the centre of the faces, then the centre of mass */
  double facecen[3] = {0, 0, 0}, area = 0, com[3] = {0, 0, 0}, volume = 0, nrm[3], cen[3];
  for (int t = 0; t < ntri; t++) {
    const double a = sim__mesh_triangle(nrm, cen, tri + 9 * t, tri + 9 * t + 3, tri + 9 * t + 6);
    for (int k = 0; k < 3; k++) {
      facecen[k] += a * cen[k];
    }
    area += a;
  }
  for (int k = 0; area >= 1e-15 && k < 3; k++) {
    facecen[k] /= area;
  }
  for (int t = 0; area >= 1e-15 && t < ntri; t++) {
    const double a = sim__mesh_triangle(nrm, cen, tri + 9 * t, tri + 9 * t + 3, tri + 9 * t + 6);
    const double vec[3] = {cen[0] - facecen[0], cen[1] - facecen[1], cen[2] - facecen[2]};
    double vol = (vec[0] * nrm[0] + vec[1] * nrm[1] + vec[2] * nrm[2]) * a / 3;
    vol = exact ? vol : fabs(vol);
    volume += vol;
    for (int k = 0; k < 3; k++) {
      com[k] += vol * (cen[k] * 3.0 / 4.0 + facecen[k] / 4.0);
    }
  }
  if (area < 1e-15 || volume < 1e-15) {
    free(tri);
    snprintf(err, err_sz, "%s: the mesh has no %s (MuJoCo refuses it too)", name,
             area < 1e-15 ? "surface area" : "volume");
    return -1;
  }
  for (int k = 0; k < 3; k++) {
    com[k] /= volume;
  }
  /* 3: re-centred (in float, as MuJoCo's vertices), products of inertia */
  for (int i = 0; i < 9 * ntri; i++) {
    tri[i] = (float)(tri[i] - com[i % 3]);
  }
  static const int ij[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double P[6] = {0, 0, 0, 0, 0, 0};
  volume = 0;
  for (int t = 0; t < ntri; t++) {
    const float *D = tri + 9 * t, *E = D + 3, *F = D + 6;
    const double a = sim__mesh_triangle(nrm, cen, D, E, F);
    double vol = (cen[0] * nrm[0] + cen[1] * nrm[1] + cen[2] * nrm[2]) * a / 3;
    vol = exact ? vol : fabs(vol);
    volume += vol;
    for (int j = 0; j < 6; j++) {
      const int r = ij[j][0], c = ij[j][1];
      P[j] += vol / 20 *
              (2 * (D[r] * D[c] + E[r] * E[c] + F[r] * F[c]) + D[r] * E[c] + D[c] * E[r] +
               D[r] * F[c] + D[c] * F[r] + E[r] * F[c] + E[c] * F[r]);
    }
  }
  free(tri);
  if (!(volume >= 1e-15)) { /* signed pyramids (exact) of faces wound inwards */
    snprintf(err, err_sz, "%s: the mesh's volume is %g, not positive (faces wound inwards?): "
                          "MuJoCo refuses it too", name, volume);
    return -1;
  }
  /* 4: the inertia about the centre of mass for density 1, its eigenvalues, the box */
  const double I[9] = {P[1] + P[2], -P[3], -P[4], -P[3], P[0] + P[2], -P[5],
                       -P[4], -P[5], P[0] + P[1]};
  double e[3], R[9];
  eig3(e, R, I);
  if (!(e[0] > 0 && e[1] > 0 && e[2] > 0) || e[0] + e[1] < e[2] || e[0] + e[2] < e[1] ||
      e[1] + e[2] < e[0]) {
    snprintf(err, err_sz, "%s: the mesh's inertia is not that of a body (eigenvalues %g %g %g; "
                          "MuJoCo refuses it too)", name, e[0], e[1], e[2]);
    return -1;
  }
  double box[3];
  for (int k = 0; k < 3; k++) {
    const double s = e[(k + 1) % 3] + e[(k + 2) % 3] - e[k];
    box[k] = sqrt(6 * fmax(s, 0) / volume) / 2;
  }
  memcpy(out->com, com, sizeof out->com);
  out->volume = volume;
  out->box_volume = exact ? volume : 8 * box[0] * box[1] * box[2];
  /* per unit mass: MuJoCo's mass·(b_j² + b_k²)/3 along its axes, which is e/volume */
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double sum = 0;
      for (int k = 0; k < 3; k++) {
        const double bj = box[(k + 1) % 3], bk = box[(k + 2) % 3];
        sum += R[3 * i + k] * ((bj * bj + bk * bk) / 3) * R[3 * j + k];
      }
      out->inertia[3 * i + j] = j >= i ? sum : out->inertia[3 * j + i]; /* symmetric exactly */
    }
  }
  return 0;
}
