/* sim/deriv/actuator_deriv.c: derivative of the actuators (sim/actuator.c): their generalized
 * forces during the step, and the DC motor's winding current advanced after it.
 *
 * Forward, with c = clamp(ctrl, ctrlrange) (∂c/∂ctrl = 1 inside the range, 0 beyond it or for a
 * non-finite command):
 *   motor:            F = gear·c
 *   position servo:   F = kp·(c − q) − kd·q̇
 *   velocity servo:   F = kv·(c − q̇)
 *   DC motor:         F = kt·i·gear·efficiency, i the winding current: the state act when the
 *                     winding has inductance, else i = clamp((V − ke·gear·q̇)/R, ±current_limit),
 *                     V = c (voltage input) or c·supply_voltage (duty)
 * then clamped to ±force_limit (derivative 0 when the clamp holds). After the step the current
 * advances by the exact solution of L·di/dt = V − R·i − ke·ω at the new speed,
 *   act⁺ = clamp(s + (act − s)·e^(−h·R/L), ±current_limit),  s = clamp((V − ke·gear·q̇⁺)/R, ...),
 * so ∂act⁺ = e·∂act + (1 − e)·∂s + (act − s)·∂e, with ∂s through ∂q̇⁺ (integrate_deriv.c's rows)
 * and the command, and ∂e/∂R = −(h/L)·e, ∂e/∂L = (h·R/L²)·e. */
#include "sim/deriv/internal.h"

#include <math.h>

/* 1 when clamp(x, lo, hi) passes x through (sim/actuator.c's comparisons) */
static int inside(double x, double lo, double hi) {
  return !(x < lo) && !(x > hi);
}

static double command(const sim_actuator *a, double ctrl, double *dc) {
  if (!isfinite(ctrl)) {
    *dc = 0;
    return 0;
  }
  *dc = inside(ctrl, a->ctrlrange[0], a->ctrlrange[1]);
  return ctrl < a->ctrlrange[0] ? a->ctrlrange[0] : ctrl > a->ctrlrange[1] ? a->ctrlrange[1] : ctrl;
}

static double volts_per_command(const sim_actuator *a) {
  return a->dc_input_voltage ? 1.0 : a->supply_voltage;
}

/* ∂F of one actuator: with respect to its joint's q and q̇, the actuator state, its command and
 * each of the parameters (written to dp[np]) */
typedef struct force_deriv {
  double force, dq, dv, dact, du;
} force_deriv;

static force_deriv dc_motor(const sim_actuator *a, const sim_data *d, double c, double dc,
                            const sim_deriv *w, int index, double *dp) {
  force_deriv f = {0};
  double qd = d->qvel[a->dof], gain = a->kt * a->gear * a->efficiency, i, di_dv = 0, di_du = 0;
  double di_dR = 0, di_dke = 0, di_dgear = 0;
  if (a->actadr >= 0) {
    i = d->act[a->actadr];
    f.dact = gain;
  } else {
    double raw = (c * volts_per_command(a) - a->ke * a->gear * qd) / a->resistance;
    i = raw < -a->current_limit ? -a->current_limit : raw > a->current_limit ? a->current_limit : raw;
    if (inside(raw, -a->current_limit, a->current_limit)) {
      di_dv = -a->ke * a->gear / a->resistance;
      di_du = volts_per_command(a) * dc / a->resistance;
      di_dR = -raw / a->resistance;
      di_dke = -a->gear * qd / a->resistance;
      di_dgear = -a->ke * qd / a->resistance;
    }
  }
  f.force = gain * i;
  f.dv = gain * di_dv;
  f.du = gain * di_du;
  for (int n = 0; n < w->np; n++) {
    if (w->params[n].index != index || sim_param_kind_of(w->params[n].field) != SIM_PARAM_ACTUATOR) {
      continue;
    }
    switch (w->params[n].field) {
    case SIM_PARAM_ACTUATOR_kt:
      dp[n] = i * a->gear * a->efficiency;
      break;
    case SIM_PARAM_ACTUATOR_gear:
      dp[n] = a->kt * a->efficiency * (i + a->gear * di_dgear);
      break;
    case SIM_PARAM_ACTUATOR_resistance:
      dp[n] = gain * di_dR;
      break;
    case SIM_PARAM_ACTUATOR_ke:
      dp[n] = gain * di_dke;
      break;
    default:
      break;
    }
  }
  return f;
}

static force_deriv actuator(const sim_actuator *a, const sim_data *d, const sim_deriv *w,
                            int index, double *dp) {
  double dc, c = command(a, d->ctrl[index], &dc), q = d->qpos[a->qposadr], qd = d->qvel[a->dof];
  force_deriv f = {0};
  for (int n = 0; n < w->np; n++) {
    dp[n] = 0;
  }
  for (int n = 0; n < w->np; n++) {
    if (w->params[n].index != index || sim_param_kind_of(w->params[n].field) != SIM_PARAM_ACTUATOR) {
      continue;
    }
    sim_param_field field = w->params[n].field;
    dp[n] = field == SIM_PARAM_ACTUATOR_gear && a->type == SIM_ACT_MOTOR ? c
            : field == SIM_PARAM_ACTUATOR_kp                              ? c - q
            : field == SIM_PARAM_ACTUATOR_kd                              ? -qd
            : field == SIM_PARAM_ACTUATOR_kv                              ? c - qd
                                                                          : 0;
  }
  switch (a->type) {
  case SIM_ACT_MOTOR:
  case SIM_ACT_SMART_SERVO: /* no force limit (sim/actuator.c returns before it) */
    f.force = a->gear * c;
    f.du = a->gear * dc;
    return f;
  case SIM_ACT_DC_MOTOR:
    f = dc_motor(a, d, c, dc, w, index, dp);
    break;
  case SIM_ACT_POSITION_SERVO:
    f.force = a->kp * (c - q) - a->kd * qd;
    f.du = a->kp * dc, f.dq = -a->kp, f.dv = -a->kd;
    break;
  case SIM_ACT_VELOCITY_SERVO:
    f.force = a->kv * (c - qd);
    f.du = a->kv * dc, f.dv = -a->kv;
    break;
  case SIM_ACT_MUSCLE: /* refused by sim_deriv_new */
    break;
  }
  if (a->force_limit > 0 && !inside(f.force, -a->force_limit, a->force_limit)) {
    force_deriv held = {0};
    for (int n = 0; n < w->np; n++) {
      dp[n] = 0;
    }
    return held;
  }
  return f;
}

void sim__actuator_deriv(sim_deriv *w, const sim_data *d) {
  const sim_model *m = w->m;
  double *dp = w->dpar;
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    force_deriv f = actuator(a, d, w, i, dp);
    int k = a->dof;
    double *row = w->G + (size_t)k * w->ncol;
    row[k] += f.dq;
    row[w->cv + k] += f.dv;
    row[w->cu + i] += f.du;
    if (a->actadr >= 0) {
      row[w->ca + a->actadr] += f.dact;
    }
    for (int n = 0; n < w->np; n++) {
      row[w->cp + n] += dp[n];
    }
  }
}

void sim__actuator_advance_deriv(sim_deriv *w, const sim_data *d, double h, double *X) {
  const sim_model *m = w->m;
  for (int i = 0; i < m->nu; i++) {
    const sim_actuator *a = &m->actuators[i];
    if (a->actadr < 0) {
      continue;
    }
    double *out = X + (size_t)(2 * w->nv + a->actadr) * w->ncol;
    const double *v1row = X + (size_t)(w->nv + a->dof) * w->ncol;
    double dc, c = command(a, d->ctrl[i], &dc), lim = a->current_limit, v1 = d->qvel[a->dof];
    double raw = (c * volts_per_command(a) - a->ke * a->gear * v1) / a->resistance;
    double s = raw < -lim ? -lim : raw > lim ? lim : raw, free_s = inside(raw, -lim, lim);
    double e = exp(-h * a->resistance / a->inductance), act = w->act0[a->actadr];
    double current = s + (act - s) * e;
    int held = !inside(current, -lim, lim);
    for (int col = 0; col < w->ncol; col++) {
      double ds = free_s != 0 ? -a->ke * a->gear / a->resistance * v1row[col] : 0, dact = 0, de = 0;
      if (col == w->ca + a->actadr) {
        dact = 1;
      } else if (col == w->cu + i) {
        ds += free_s * volts_per_command(a) * dc / a->resistance;
      } else if (col >= w->cp) {
        sim_param p = w->params[col - w->cp];
        if (p.index == i && sim_param_kind_of(p.field) == SIM_PARAM_ACTUATOR) {
          if (p.field == SIM_PARAM_ACTUATOR_resistance) {
            ds += free_s * -raw / a->resistance;
            de = -h / a->inductance * e;
          } else if (p.field == SIM_PARAM_ACTUATOR_inductance) {
            de = h * a->resistance / (a->inductance * a->inductance) * e;
          } else if (p.field == SIM_PARAM_ACTUATOR_ke) {
            ds += free_s * -a->gear * v1 / a->resistance;
          } else if (p.field == SIM_PARAM_ACTUATOR_gear) {
            ds += free_s * -a->ke * v1 / a->resistance;
          }
        }
      }
      out[col] = held ? 0 : e * dact + (1 - e) * ds + (act - s) * de;
    }
  }
}
