/* tests/sim/mujoco_pair.c: our model beside MuJoCo's (mujoco_pair.h). */
#include "mujoco_pair.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact_scenes.h"
#include "mjcf_writer.h"

double mj_max_diff(const double *a, const double *b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs(a[i] - b[i]));
  }
  return e;
}

static double max_abs(const double *v, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(v[i]));
  }
  return r;
}

int mj_pair_open(mj_pair *p, const char *json, char *err, size_t err_sz) {
  memset(p, 0, sizeof *p);
  p->m = sim_model_load_string(json, "scene", err, err_sz);
  if (!p->m) {
    return -1;
  }
  p->mm = mjcf_load(p->m, err, err_sz);
  p->d = sim_data_new(p->m);
  p->md = p->mm ? mj_makeData(p->mm) : NULL;
  if (!p->mm || !p->d || !p->md) {
    mj_pair_close(p);
    return -1;
  }
  if (p->mm->nq != p->m->nq || p->mm->nv != p->m->nv || p->mm->nu != p->m->nu) {
    snprintf(err, err_sz, "MuJoCo's model has nq %d nv %d nu %d, ours %d %d %d", p->mm->nq,
             p->mm->nv, p->mm->nu, p->m->nq, p->m->nv, p->m->nu);
    mj_pair_close(p);
    return -1;
  }
  memcpy(p->md->qpos, p->d->qpos, (size_t)p->m->nq * sizeof(double));
  return 0;
}

void mj_pair_close(mj_pair *p) {
  mj_deleteData(p->md);
  mj_deleteModel(p->mm);
  sim_data_free(p->d);
  sim_model_free(p->m);
  memset(p, 0, sizeof *p);
}

void mj_pair_options(mj_pair *p, sim_solver_type solver, sim_cone cone, int iterations,
                     double tolerance) {
  p->m->opt.solver = solver;
  p->m->opt.cone = cone;
  p->m->opt.solver_iterations = iterations;
  p->m->opt.solver_tolerance = tolerance;
  p->mm->opt.solver = solver == SIM_SOLVER_NEWTON ? mjSOL_NEWTON : mjSOL_CG;
  p->mm->opt.cone = cone == SIM_CONE_ELLIPTIC ? mjCONE_ELLIPTIC : mjCONE_PYRAMIDAL;
  p->mm->opt.iterations = iterations;
  p->mm->opt.tolerance = tolerance;
}

void mj_pair_condim(mj_pair *p, int g, int condim) {
  p->m->geoms[g].condim = condim;
  p->mm->geom_condim[mj_name2id(p->mm, mjOBJ_GEOM, p->m->geoms[g].name)] = condim;
}

void mj_pair_copy_state(mj_pair *p) {
  const sim_model *m = p->m;
  memcpy(p->d->qpos, p->md->qpos, (size_t)m->nq * sizeof(double));
  memcpy(p->d->qvel, p->md->qvel, (size_t)m->nv * sizeof(double));
  memcpy(p->d->qacc_warmstart, p->md->qacc_warmstart, (size_t)m->nv * sizeof(double));
  memcpy(p->d->qfrc_applied, p->md->qfrc_applied, (size_t)m->nv * sizeof(double));
  memcpy(p->d->ctrl, p->md->ctrl, (size_t)m->nu * sizeof(double));
  p->d->time = p->md->time;
}

/* MuJoCo's contact matching our contact c (same geoms by name, same position), or -1 */
static int their_contact(const mj_pair *p, int c) {
  const int g1 = mj_name2id(p->mm, mjOBJ_GEOM, p->m->geoms[p->d->con_geom[2 * c]].name);
  const int g2 = mj_name2id(p->mm, mjOBJ_GEOM, p->m->geoms[p->d->con_geom[2 * c + 1]].name);
  for (int k = 0; k < p->md->ncon; k++) {
    const mjContact *mc = &p->md->contact[k];
    if (mc->geom1 == g1 && mc->geom2 == g2 && mj_max_diff(mc->pos, p->d->con_pos + 3 * c, 3) < 1e-9) {
      return k;
    }
  }
  return -1;
}

int mj_pair_compare_forward(mj_pair *p, mj_state_errors *e, char *err, size_t err_sz) {
  const sim_model *m = p->m;
  sim_data *d = p->d;
  const mjData *md = p->md;
  mj_forward(p->mm, p->md);
  sim_forward(m, d);
  if (d->ncon != md->ncon) {
    snprintf(err, err_sz, "t = %g: %d contacts, MuJoCo %d", md->time, d->ncon, md->ncon);
    return -1;
  }
  /* equality rows, then joint rows (friction, then limits) come first on both sides, in the
   * same order */
  if (d->ne != md->ne) {
    snprintf(err, err_sz, "t = %g: %d equality rows, MuJoCo %d", md->time, d->ne, md->ne);
    return -1;
  }
  int njoint = 0;
  while (njoint < d->nefc && (d->efc_type[njoint] <= SIM_CNSTR_LIMIT_JOINT ||
                              d->efc_type[njoint] == SIM_CNSTR_EQUALITY)) {
    njoint++;
  }
  double scale = fmax(max_abs(md->efc_force, md->nefc), 1e-9);
  for (int i = 0; i < njoint; i++) {
    e->force = fmax(e->force, fabs(d->efc_force[i] - md->efc_force[i]) / scale);
  }
  /* contacts: the force in the contact frame */
  for (int c = 0; c < d->ncon; c++) {
    const int k = their_contact(p, c);
    if (k < 0) {
      snprintf(err, err_sz, "t = %g: our contact %d (%s, %s) is not MuJoCo's", md->time, c,
               m->geoms[d->con_geom[2 * c]].name, m->geoms[d->con_geom[2 * c + 1]].name);
      return -1;
    }
    double ours[3], theirs[6];
    sim_contact_force(m, d, c, ours);
    mj_contactForce(p->mm, md, k, theirs);
    e->force = fmax(e->force, mj_max_diff(ours, theirs, 3) / scale);
  }
  /* q̈ relative to the larger of q̈ and the constraint's share of it */
  double share = 0;
  for (int i = 0; i < m->nv; i++) {
    share = fmax(share, fabs(md->qacc[i] - md->qacc_smooth[i]));
  }
  const double sa = fmax(fmax(max_abs(md->qacc, m->nv), share), 1.0);
  e->qacc = fmax(e->qacc, mj_max_diff(d->qacc, md->qacc, m->nv) / sa);
  e->unconverged += d->nefc > 0 && (d->solver.iterations >= m->opt.solver_iterations ||
                                    md->solver_iter >= p->mm->opt.iterations);
  e->states++;
  e->contacts += d->ncon;
  e->rows += njoint;
  return 0;
}

/* --- the scenes ------------------------------------------------------------------------------- */

static int open_scene(mj_pair *p, int k, const mj_run *r, char *err, size_t err_sz) {
  contact_scene s;
  if (scene_make(&s, k, err, err_sz) != 0) {
    return -1;
  }
  const int rc = mj_pair_open(p, s.json, err, err_sz);
  scene_free(&s);
  if (rc != 0) {
    return -1;
  }
  mj_pair_options(p, r->solver, r->cone, r->iterations ? r->iterations : p->m->opt.solver_iterations,
                  r->iterations ? r->tolerance : p->m->opt.solver_tolerance);
  if (r->impratio > 0) {
    p->m->opt.impratio = p->mm->opt.impratio = r->impratio;
  }
  for (int g = 0; r->condim1 && g < p->m->ngeom; g++) {
    mj_pair_condim(p, g, 1);
  }
  scene_start(k, p->m, p->d->qpos, p->d->qvel);
  memcpy(p->md->qpos, p->d->qpos, (size_t)p->m->nq * sizeof(double));
  memcpy(p->md->qvel, p->d->qvel, (size_t)p->m->nv * sizeof(double));
  return 0;
}

int mj_scene_states(int k, const mj_run *r, int steps, int every, mj_state_errors *e, char *err,
                    size_t err_sz) {
  mj_pair p;
  if (open_scene(&p, k, r, err, err_sz) != 0) {
    return -1;
  }
  int rc = 0;
  for (int s = 0; s < steps && rc == 0; s++) {
    scene_control(k, p.m, p.md->time, p.md->ctrl);
    if (s % every == 0) {
      mj_pair_copy_state(&p);
      rc = mj_pair_compare_forward(&p, e, err, err_sz);
    }
    mj_step(p.mm, p.md);
  }
  mj_pair_close(&p);
  return rc;
}

int mj_scene_trajectory(int k, const mj_run *r, double seconds, mj_trajectory *t, char *err,
                        size_t err_sz) {
  mj_pair p;
  if (open_scene(&p, k, r, err, err_sz) != 0) {
    return -1;
  }
  mjData *other = mj_makeData(p.mm); /* MuJoCo with the other solver */
  memcpy(other->qpos, p.md->qpos, (size_t)p.m->nq * sizeof(double));
  memcpy(other->qvel, p.md->qvel, (size_t)p.m->nv * sizeof(double));
  const int mine = p.mm->opt.solver, theirs = mine == mjSOL_NEWTON ? mjSOL_CG : mjSOL_NEWTON;
  memset(t, 0, sizeof *t);
  t->steps = (int)lround(seconds / p.m->opt.timestep);
  for (int s = 0; s < t->steps; s++) {
    scene_control(k, p.m, p.d->time, p.d->ctrl);
    memcpy(p.md->ctrl, p.d->ctrl, (size_t)p.m->nu * sizeof(double));
    memcpy(other->ctrl, p.d->ctrl, (size_t)p.m->nu * sizeof(double));
    sim_step(p.m, p.d);
    mj_step(p.mm, p.md);
    p.mm->opt.solver = theirs;
    mj_step(p.mm, other);
    p.mm->opt.solver = mine;
    t->touching += p.d->ncon > 0;
    t->maxcon = p.d->ncon > t->maxcon ? p.d->ncon : t->maxcon;
    t->ours = fmax(t->ours, mj_max_diff(p.d->qpos, p.md->qpos, p.m->nq));
    t->cg_newton = fmax(t->cg_newton, mj_max_diff(other->qpos, p.md->qpos, p.m->nq));
  }
  mj_deleteData(other);
  mj_pair_close(&p);
  return 0;
}
