/* sim/import/mass.c: volumes and inertias of primitive shapes; sums of parts. */
#include "sim/import/mass.h"

#include <math.h>
#include <string.h>

#include "sim/import/xml_read.h"

static const double pi = 3.14159265358979323846;

double imp__shape_volume(imp_shape type, const double size[3]) {
  const double r = size[0];
  switch (type) {
  case IMP_SHAPE_SPHERE:
    return 4 * pi * r * r * r / 3;
  case IMP_SHAPE_CAPSULE:
    return pi * (r * r * 2 * size[1] + 4 * r * r * r / 3);
  case IMP_SHAPE_CYLINDER:
    return pi * r * r * 2 * size[1];
  case IMP_SHAPE_ELLIPSOID:
    return 4 * pi * size[0] * size[1] * size[2] / 3;
  case IMP_SHAPE_BOX:
    return 8 * size[0] * size[1] * size[2];
  }
  return 0;
}

void imp__shape_inertia(double diag[3], imp_shape type, const double size[3], double mass) {
  const double r = size[0];
  switch (type) {
  case IMP_SHAPE_SPHERE:
    diag[0] = diag[1] = diag[2] = 2 * mass * r * r / 5;
    return;
  case IMP_SHAPE_CAPSULE: {
    /* the mass splits between the cylinder and the two hemispheres by volume; each hemisphere's
     * centre of mass sits 3r/8 beyond the end of the cylinder */
    const double h = 2 * size[1];
    const double m_sphere = mass * 4 * r / (4 * r + 3 * h);
    const double m_cyl = mass - m_sphere;
    const double i_sphere = 2 * m_sphere * r * r / 5;
    const double side = m_cyl * (3 * r * r + h * h) / 12 + i_sphere +
                        m_sphere * h * (3 * r + 2 * h) / 8;
    diag[0] = diag[1] = side;
    diag[2] = m_cyl * r * r / 2 + i_sphere;
    return;
  }
  case IMP_SHAPE_CYLINDER: {
    const double h = 2 * size[1];
    diag[0] = diag[1] = mass * (3 * r * r + h * h) / 12;
    diag[2] = mass * r * r / 2;
    return;
  }
  case IMP_SHAPE_ELLIPSOID:
    diag[0] = mass * (size[1] * size[1] + size[2] * size[2]) / 5;
    diag[1] = mass * (size[0] * size[0] + size[2] * size[2]) / 5;
    diag[2] = mass * (size[0] * size[0] + size[1] * size[1]) / 5;
    return;
  case IMP_SHAPE_BOX:
    diag[0] = mass * (size[1] * size[1] + size[2] * size[2]) / 3;
    diag[1] = mass * (size[0] * size[0] + size[2] * size[2]) / 3;
    diag[2] = mass * (size[0] * size[0] + size[1] * size[1]) / 3;
    return;
  }
}

void imp__mass_clear(imp_mass *sum) { memset(sum, 0, sizeof *sum); }

static void add_point_mass(double I[9], double m, const double p[3]) {
  const double p2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      I[3 * i + j] += m * ((i == j ? p2 : 0) - p[i] * p[j]);
    }
  }
}

void imp__mass_add(imp_mass *sum, double m, const double pos[3], const double R[9],
                   const double diag[3]) {
  if (sum->nparts >= IMP_MASS_PARTS_MAX) {
    sum->nparts = IMP_MASS_PARTS_MAX + 1; /* finish refuses */
    return;
  }
  const int k = sum->nparts++;
  double D[9] = {diag[0], 0, 0, 0, diag[1], 0, 0, 0, diag[2]};
  imp__rotate_inertia(sum->part_inertia[k], R, D);
  memcpy(sum->part_pos[k], pos, sizeof sum->part_pos[k]);
  sum->part_mass[k] = m;
  sum->mass += m;
}

void imp__mass_add_full(imp_mass *sum, double m, const double pos[3], const double I[9]) {
  const double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, none[3] = {0, 0, 0};
  imp__mass_add(sum, m, pos, R, none);
  if (sum->nparts <= IMP_MASS_PARTS_MAX) {
    memcpy(sum->part_inertia[sum->nparts - 1], I, sizeof sum->part_inertia[0]);
  }
}

int imp__mass_finish(imp_mass *sum) {
  if (!(sum->mass > 0) || sum->nparts > IMP_MASS_PARTS_MAX) {
    return -1;
  }
  if (sum->nparts == 1) { /* the part's own frame, exactly */
    memcpy(sum->com, sum->part_pos[0], sizeof sum->com);
    memcpy(sum->inertia, sum->part_inertia[0], sizeof sum->inertia);
    return 0;
  }
  memset(sum->com, 0, sizeof sum->com);
  memset(sum->inertia, 0, sizeof sum->inertia);
  for (int k = 0; k < sum->nparts; k++) {
    for (int i = 0; i < 3; i++) {
      sum->com[i] += sum->part_mass[k] * sum->part_pos[k][i];
    }
  }
  for (int i = 0; i < 3; i++) {
    sum->com[i] /= sum->mass;
  }
  for (int k = 0; k < sum->nparts; k++) {
    const double d[3] = {sum->part_pos[k][0] - sum->com[0], sum->part_pos[k][1] - sum->com[1],
                         sum->part_pos[k][2] - sum->com[2]};
    for (int i = 0; i < 9; i++) {
      sum->inertia[i] += sum->part_inertia[k][i];
    }
    add_point_mass(sum->inertia, sum->part_mass[k], d);
  }
  return 0;
}
