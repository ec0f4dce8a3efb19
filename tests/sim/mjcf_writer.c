/* tests/sim/mjcf_writer.c: an Achilles model as MuJoCo MJCF (see mjcf_writer.h). */
#include "mjcf_writer.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<mujoco/mujoco.h>)
#include <mujoco/mujoco.h>
#define MJCF_HAVE_MUJOCO 1
#endif
#endif

/* an output buffer that counts what it could not hold, like snprintf */
typedef struct mjcf_out {
  char *buf;
  size_t sz;
  size_t len; /* characters produced so far, written or not */
} mjcf_out;

static void out_printf(mjcf_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(mjcf_out *o, const char *fmt, ...) {
  va_list ap;
  char *dst = NULL;
  size_t room = 0;
  if (o->len < o->sz) {
    dst = o->buf + o->len;
    room = o->sz - o->len;
  }
  va_start(ap, fmt);
  int n = vsnprintf(dst, room, fmt, ap);
  va_end(ap);
  if (n > 0) {
    o->len += (size_t)n;
  }
}

/* a name as an XML attribute value: the five special characters escaped */
static void out_name(mjcf_out *o, const char *name) {
  for (const char *c = name; *c; c++) {
    switch (*c) {
    case '&': out_printf(o, "&amp;"); break;
    case '<': out_printf(o, "&lt;"); break;
    case '>': out_printf(o, "&gt;"); break;
    case '"': out_printf(o, "&quot;"); break;
    case '\'': out_printf(o, "&apos;"); break;
    default: out_printf(o, "%c", *c); break;
    }
  }
}

static void out_indent(mjcf_out *o, int depth) {
  out_printf(o, "%*s", 2 * depth, "");
}

/* %.17g round-trips every double exactly through MuJoCo's strtod */
static void out_vec(mjcf_out *o, const char *attr, const double *v, int n) {
  out_printf(o, " %s=\"", attr);
  for (int i = 0; i < n; i++) {
    out_printf(o, "%s%.17g", i ? " " : "", v[i]);
  }
  out_printf(o, "\"");
}

static void out_real(mjcf_out *o, const char *attr, double v) {
  out_vec(o, attr, &v, 1);
}

static void write_sites(mjcf_out *o, const sim_model *m, int body, int depth) {
  for (int s = 0; s < m->nsite; s++) {
    if (m->sites[s].body != body) {
      continue;
    }
    out_indent(o, depth);
    out_printf(o, "<site name=\"");
    out_name(o, m->sites[s].name);
    out_printf(o, "\"");
    out_vec(o, "pos", m->sites[s].pos, 3);
    out_printf(o, "/>\n");
  }
}

static void write_geoms(mjcf_out *o, const sim_model *m, int body, int depth) {
  /* a mesh is written without its asset: MuJoCo refuses it, naming the geom (a test that needs
   * one writes its own MJCF) */
  static const char *const types[] = {"plane", "sphere", "capsule", "box", "cylinder", "mesh"};
  static const int nsize[] = {0, 1, 2, 3, 2, 0};
  for (int g = 0; g < m->ngeom; g++) {
    const sim_geom *geom = &m->geoms[g];
    if (geom->body != body) {
      continue;
    }
    out_indent(o, depth);
    out_printf(o, "<geom name=\"");
    out_name(o, geom->name);
    out_printf(o, "\" type=\"%s\"", types[geom->type]);
    out_vec(o, "pos", geom->pos, 3);
    out_vec(o, "quat", geom->quat, 4);
    if (geom->type == SIM_GEOM_PLANE) {
      out_printf(o, " size=\"0 0 1\"");
    } else if (geom->type != SIM_GEOM_MESH) {
      out_vec(o, "size", geom->size, nsize[geom->type]);
    }
    out_vec(o, "friction", geom->friction, 3);
    out_vec(o, "solref", geom->solref, SIM_NREF);
    out_vec(o, "solimp", geom->solimp, SIM_NIMP);
    out_printf(o, " contype=\"%d\" conaffinity=\"%d\"", geom->contype, geom->conaffinity);
    out_printf(o, " condim=\"%d\" priority=\"%d\"", geom->condim, geom->priority);
    out_real(o, "margin", geom->margin);
    out_real(o, "gap", geom->gap);
    out_printf(o, "/>\n");
  }
}

static void write_joint(mjcf_out *o, const sim_joint *j, int depth) {
  if (j->type == SIM_JOINT_BALL || j->type == SIM_JOINT_FREE) {
    out_indent(o, depth);
    out_printf(o, "<joint name=\"");
    out_name(o, j->name);
    out_printf(o, "\" type=\"%s\" pos=\"0 0 0\"", j->type == SIM_JOINT_BALL ? "ball" : "free");
    out_real(o, "damping", j->damping);
    out_real(o, "armature", j->armature);
    out_printf(o, " limited=\"false\" margin=\"0\"/>\n");
    return;
  }
  if (j->type != SIM_JOINT_HINGE && j->type != SIM_JOINT_SLIDE) {
    return; /* fixed: the body is welded to its parent */
  }
  out_indent(o, depth);
  out_printf(o, "<joint name=\"");
  out_name(o, j->name);
  out_printf(o, "\" type=\"%s\" pos=\"0 0 0\"", j->type == SIM_JOINT_HINGE ? "hinge" : "slide");
  out_vec(o, "axis", j->axis, 3);
  out_real(o, "damping", j->damping);
  out_real(o, "armature", j->armature);
  out_real(o, "stiffness", j->stiffness);
  out_real(o, "springref", j->springref);
  out_printf(o, " limited=\"%s\"", j->limited ? "true" : "false");
  if (j->limited) {
    out_vec(o, "range", j->range, 2);
  }
  out_vec(o, "solreflimit", j->solref_limit, SIM_NREF);
  out_vec(o, "solimplimit", j->solimp_limit, SIM_NIMP);
  out_real(o, "frictionloss", j->frictionloss);
  out_vec(o, "solreffriction", j->solref_friction, SIM_NREF);
  out_vec(o, "solimpfriction", j->solimp_friction, SIM_NIMP);
  out_printf(o, " margin=\"0\"/>\n");
}

/* Principal axes of a symmetric 3x3 matrix by cyclic Jacobi rotations, run to convergence:
 * A = V·diag(w)·V' with V a rotation (det +1). MuJoCo's own diagonalization of `fullinertia`
 * (mju_eig3 in 2.2.2) stops at a loose tolerance and changes inertias with products of inertia
 * by up to 1e-7 relative, so the writer diagonalizes and writes quat + diaginertia instead. */
static void eig3(double w[3], double V[9], const double A[9]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int i = 0; i < 9; i++) {
    V[i] = i % 4 == 0 ? 1.0 : 0.0;
  }
  static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int sweep = 0; sweep < 64; sweep++) {
    int rotated = 0;
    for (int k = 0; k < 3; k++) {
      int p = pairs[k][0], q = pairs[k][1];
      double apq = a[3 * p + q], app = a[3 * p + p], aqq = a[3 * q + q];
      /* below rounding of the diagonal: the pair is diagonal */
      if (fabs(apq) <= 1e-19 * (fabs(app) + fabs(aqq))) {
        continue;
      }
      rotated = 1;
      /* the rotation J (identity but c, s in rows/columns p, q) that zeroes a[p][q] */
      double theta = (aqq - app) / (2 * apq);
      double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
      double c = 1 / sqrt(t * t + 1), s = t * c;
      /* a = J'·a·J, V = V·J */
      for (int r = 0; r < 3; r++) {
        double arp = a[3 * r + p], arq = a[3 * r + q];
        a[3 * r + p] = c * arp - s * arq;
        a[3 * r + q] = s * arp + c * arq;
      }
      for (int r = 0; r < 3; r++) {
        double apr = a[3 * p + r], aqr = a[3 * q + r];
        a[3 * p + r] = c * apr - s * aqr;
        a[3 * q + r] = s * apr + c * aqr;
      }
      a[3 * p + q] = a[3 * q + p] = 0;
      for (int r = 0; r < 3; r++) {
        double vrp = V[3 * r + p], vrq = V[3 * r + q];
        V[3 * r + p] = c * vrp - s * vrq;
        V[3 * r + q] = s * vrp + c * vrq;
      }
    }
    if (!rotated) {
      break;
    }
  }
  for (int i = 0; i < 3; i++) {
    w[i] = a[4 * i];
  }
  /* a proper rotation: flip the last axis if V is a reflection */
  double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
               V[2] * (V[3] * V[7] - V[4] * V[6]);
  if (det < 0) {
    V[2] = -V[2];
    V[5] = -V[5];
    V[8] = -V[8];
  }
}

/* rotation matrix (row-major) to unit quaternion [w x y z], from its largest component */
static void mat2quat(double q[4], const double R[9]) {
  double tr = R[0] + R[4] + R[8];
  if (tr > 0) {
    double s = 2 * sqrt(1 + tr);
    q[0] = s / 4;
    q[1] = (R[7] - R[5]) / s;
    q[2] = (R[2] - R[6]) / s;
    q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s;
    q[1] = s / 4;
    q[2] = (R[1] + R[3]) / s;
    q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s;
    q[1] = (R[1] + R[3]) / s;
    q[2] = s / 4;
    q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s;
    q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s;
    q[3] = s / 4;
  }
}

/* inertia about the COM in body axes, as principal moments in a principal frame */
static void write_inertial(mjcf_out *o, const sim_body *b, int depth) {
  if (!(b->mass > 0)) {
    return; /* massless: with inertiafromgeom="false" and no geoms MuJoCo gives mass 0 too */
  }
  double I[9], w[3], V[9], q[4];
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 3; c++) {
      I[3 * r + c] = 0.5 * (b->inertia[3 * r + c] + b->inertia[3 * c + r]);
    }
  }
  eig3(w, V, I);
  mat2quat(q, V);
  out_indent(o, depth);
  out_printf(o, "<inertial");
  out_vec(o, "pos", b->com, 3);
  out_vec(o, "quat", q, 4);
  out_real(o, "mass", b->mass);
  out_vec(o, "diaginertia", w, 3);
  out_printf(o, "/>\n");
}

static void write_body(mjcf_out *o, const sim_model *m, int body, int depth) {
  const sim_body *b = &m->bodies[body];
  out_indent(o, depth);
  out_printf(o, "<body name=\"");
  out_name(o, b->name);
  out_printf(o, "\"");
  out_vec(o, "pos", b->pos, 3);
  out_vec(o, "quat", b->quat, 4);
  out_printf(o, ">\n");
  for (int j = b->joint; j >= 0 && j < b->joint + b->jntnum && j < m->njnt; j++) {
    write_joint(o, &m->joints[j], depth + 1); /* in order: MuJoCo applies them so too */
  }
  write_inertial(o, b, depth + 1);
  write_sites(o, m, body, depth + 1);
  write_geoms(o, m, body, depth + 1);
  /* children follow their parent in index order (the loader sorts bodies topologically) */
  for (int c = body + 1; c < m->nbody; c++) {
    if (m->bodies[c].parent == body) {
      write_body(o, m, c, depth + 1);
    }
  }
  out_indent(o, depth);
  out_printf(o, "</body>\n");
}

static void write_option(mjcf_out *o, const sim_option *opt, int ngeom) {
  const char *integrator = "Euler";
  if (opt->integrator == SIM_INTEGRATOR_RK4) {
    integrator = "RK4";
  } else if (opt->integrator != SIM_INTEGRATOR_EULER) {
    out_printf(o, "  <!-- Achilles integrator %d has no MuJoCo 2.2.2 equivalent: Euler -->\n",
               (int)opt->integrator);
  }
  out_printf(o, "  <option");
  out_real(o, "timestep", opt->timestep);
  out_vec(o, "gravity", opt->gravity, 3);
  out_printf(o, " integrator=\"%s\" solver=\"%s\" cone=\"%s\" jacobian=\"dense\"", integrator,
             opt->solver == SIM_SOLVER_NEWTON ? "Newton" : "CG",
             opt->cone == SIM_CONE_ELLIPTIC ? "elliptic" : "pyramidal");
  out_real(o, "impratio", opt->impratio);
  out_printf(o, " iterations=\"%d\"", opt->solver_iterations);
  out_real(o, "tolerance", opt->solver_tolerance);
  out_printf(o, ">\n");
  out_printf(o, "    <flag contact=\"%s\" energy=\"enable\"/>\n", ngeom ? "enable" : "disable");
  out_printf(o, "  </option>\n");
}

/* An actuator as a MuJoCo general actuator with gear 1: force = gain·ctrl + b1·q + b2·qd,
 * clamped to ±limit (0: unclamped). Achilles' DC motor without inductance is exactly affine:
 * force = kt·g·η·(V − ke·g·qd)/R with V = supply·duty, and its current limit is a force limit
 * of kt·g·η·limit. A DC motor with inductance has state MuJoCo's general actuator cannot hold:
 * it is written as a comment, and comparisons must not use one. */
static void write_actuator(mjcf_out *o, const sim_actuator *a, const sim_joint *j) {
  double gain = 0, b1 = 0, b2 = 0, limit = a->force_limit;
  switch (a->type) {
  case SIM_ACT_MOTOR:
  case SIM_ACT_SMART_SERVO:
    gain = a->gear;
    break;
  case SIM_ACT_DC_MOTOR: {
    double k = a->kt * a->gear * a->efficiency / a->resistance;
    gain = k * (a->dc_input_voltage ? 1.0 : a->supply_voltage);
    b2 = -k * a->ke * a->gear;
    double current_force = a->kt * a->gear * a->efficiency * a->current_limit;
    limit = limit > 0 ? fmin(limit, current_force) : current_force;
    if (a->inductance > 0) {
      out_printf(o, "    <!-- %s: DC motor with inductance, not representable -->\n", a->name);
      return;
    }
    break;
  }
  case SIM_ACT_POSITION_SERVO:
    gain = a->kp, b1 = -a->kp, b2 = -a->kd;
    break;
  case SIM_ACT_VELOCITY_SERVO:
    gain = a->kv, b2 = -a->kv;
    break;
  case SIM_ACT_MUSCLE: /* tendons and muscles are compared from MJCF files (test_tendon.c) */
    out_printf(o, "    <!-- %s: muscle, not written -->\n", a->name);
    return;
  }
  out_printf(o, "    <general name=\"");
  out_name(o, a->name);
  out_printf(o, "\" joint=\"");
  out_name(o, j->name);
  out_printf(o, "\" gaintype=\"fixed\" biastype=\"affine\" gainprm=\"%.17g\" "
                "biasprm=\"0 %.17g %.17g\"", gain, b1, b2);
  int ctrl_limited = a->ctrlrange[0] > -1e300 && a->ctrlrange[1] < 1e300;
  out_printf(o, " ctrllimited=\"%s\"", ctrl_limited ? "true" : "false");
  if (ctrl_limited) {
    out_vec(o, "ctrlrange", a->ctrlrange, 2);
  }
  out_printf(o, " forcelimited=\"%s\"", limit > 0 ? "true" : "false");
  if (limit > 0) {
    const double range[2] = {-limit, limit};
    out_vec(o, "forcerange", range, 2);
  }
  out_printf(o, "/>\n");
}

/* The equality constraints with their data as our loader completed it (a weld's relpose
 * written out, so MuJoCo takes it; a connect's second point MuJoCo computes itself). */
static void write_equality(mjcf_out *o, const sim_model *m) {
  static const char *const tags[] = {"connect", "weld", "joint"};
  out_printf(o, "  <equality>\n");
  for (int e = 0; e < m->neq; e++) {
    const sim_equality *q = &m->equalities[e];
    if (q->type == SIM_EQ_TENDON) { /* tendons are not written */
      out_printf(o, "    <!-- equality %d: on tendons, not written -->\n", e);
      continue;
    }
    out_printf(o, "    <%s", tags[q->type]);
    if (q->name[0]) {
      out_printf(o, " name=\"");
      out_name(o, q->name);
      out_printf(o, "\"");
    }
    const int joint = q->type == SIM_EQ_JOINT;
    const char *n1 = joint ? m->joints[q->obj1].name : m->bodies[q->obj1].name;
    out_printf(o, joint ? " joint1=\"" : " body1=\"");
    out_name(o, n1);
    out_printf(o, "\"");
    if (joint ? q->obj2 >= 0 : 1) {
      out_printf(o, joint ? " joint2=\"" : " body2=\"");
      out_name(o, joint ? m->joints[q->obj2].name : m->bodies[q->obj2].name);
      out_printf(o, "\"");
    }
    if (q->type == SIM_EQ_CONNECT) {
      out_vec(o, "anchor", q->data, 3);
    } else if (q->type == SIM_EQ_WELD) {
      out_vec(o, "anchor", q->data, 3);
      out_vec(o, "relpose", q->data + 3, 7);
      out_real(o, "torquescale", q->data[10]);
    } else {
      out_vec(o, "polycoef", q->data, 5);
    }
    out_printf(o, " active=\"%s\"", q->active ? "true" : "false");
    out_vec(o, "solref", q->solref, SIM_NREF);
    out_vec(o, "solimp", q->solimp, SIM_NIMP);
    out_printf(o, "/>\n");
  }
  out_printf(o, "  </equality>\n");
}

int mjcf_write(const sim_model *m, char *xml, size_t xml_sz) {
  mjcf_out o = {xml, xml_sz, 0};
  if (xml && xml_sz > 0) {
    xml[0] = '\0';
  }

  /* header: radians, and a compiler that keeps the given inertia as it is */
  out_printf(&o, "<mujoco model=\"");
  out_name(&o, m->name);
  out_printf(&o, "\">\n");
  out_printf(&o, "  <compiler angle=\"radian\" inertiafromgeom=\"false\" "
                 "balanceinertia=\"false\" boundmass=\"0\" boundinertia=\"0\" "
                 "settotalmass=\"-1\" fusestatic=\"false\"/>\n");
  write_option(&o, &m->opt, m->ngeom);

  /* the tree: sites of the world, then every body whose parent is the world */
  out_printf(&o, "  <worldbody>\n");
  write_sites(&o, m, 0, 2);
  write_geoms(&o, m, 0, 2);
  for (int b = 1; b < m->nbody; b++) {
    if (m->bodies[b].parent == 0) {
      write_body(&o, m, b, 2);
    }
  }
  out_printf(&o, "  </worldbody>\n");
  if (m->nexclude > 0) {
    out_printf(&o, "  <contact>\n");
    for (int i = 0; i < m->nexclude; i++) {
      out_printf(&o, "    <exclude body1=\"");
      out_name(&o, m->bodies[m->exclude[2 * i]].name);
      out_printf(&o, "\" body2=\"");
      out_name(&o, m->bodies[m->exclude[2 * i + 1]].name);
      out_printf(&o, "\"/>\n");
    }
    out_printf(&o, "  </contact>\n");
  }
  if (m->neq > 0) {
    write_equality(&o, m);
  }
  if (m->nu > 0) {
    out_printf(&o, "  <actuator>\n");
    for (int i = 0; i < m->nu; i++) {
      const sim_actuator *a = &m->actuators[i];
      if (a->adhesion_body >= 0) { /* MuJoCo's shortcut: gain = our gear */
        out_printf(&o, "    <adhesion name=\"");
        out_name(&o, a->name);
        out_printf(&o, "\" body=\"");
        out_name(&o, m->bodies[a->adhesion_body].name);
        out_printf(&o, "\" gain=\"%.17g\"", a->gear);
        out_vec(&o, "ctrlrange", a->ctrlrange, 2);
        out_printf(&o, "/>\n");
        continue;
      }
      if (a->crank_site >= 0) { /* sites are written without their axes */
        out_printf(&o, "    <!-- %s: a slider-crank, not written -->\n", m->actuators[i].name);
        continue;
      }
      if (m->actuators[i].joint >= 0) { /* a tendon's actuator is not written (no tendons) */
        write_actuator(&o, &m->actuators[i], &m->joints[m->actuators[i].joint]);
      }
    }
    out_printf(&o, "  </actuator>\n");
  }
  out_printf(&o, "</mujoco>\n");

  if (o.len >= (size_t)INT_MAX) {
    return INT_MIN;
  }
  return o.len < xml_sz ? (int)o.len : -(int)o.len;
}

#ifdef MJCF_HAVE_MUJOCO
static void set_err(char *err, size_t err_sz, const char *msg) {
  if (err && err_sz > 0) {
    snprintf(err, err_sz, "%s", msg);
  }
}

struct mjModel_ *mjcf_load(const sim_model *m, char *err, size_t err_sz) {
  static const char fname[] = "achilles_model.xml";
  set_err(err, err_sz, "");

  /* the text, in a buffer of the size it asks for */
  int need = mjcf_write(m, NULL, 0);
  size_t len = (size_t)(need < 0 ? -need : need);
  char *xml = malloc(len + 1);
  if (!xml) {
    set_err(err, err_sz, "mjcf_load: out of memory");
    return NULL;
  }
  mjcf_write(m, xml, len + 1);

  /* a virtual file system (about 2 MB in 2.2.2, hence the heap) holding one file */
  mjVFS *vfs = malloc(sizeof *vfs);
  if (!vfs) {
    free(xml);
    set_err(err, err_sz, "mjcf_load: out of memory");
    return NULL;
  }
  mj_defaultVFS(vfs);
  mjModel *mm = NULL;
  if (mj_makeEmptyFileVFS(vfs, fname, (int)len) != 0) {
    set_err(err, err_sz, "mjcf_load: mj_makeEmptyFileVFS failed");
  } else {
    memcpy(vfs->filedata[mj_findFileVFS(vfs, fname)], xml, len);
    char mjerr[1000] = "";
    mm = mj_loadXML(fname, vfs, mjerr, (int)sizeof mjerr);
    if (!mm && err && err_sz > 0) {
      snprintf(err, err_sz, "mjcf_load: mj_loadXML: %s", mjerr);
    }
  }
  mj_deleteVFS(vfs);
  free(vfs);
  free(xml);
  return mm;
}
#endif
