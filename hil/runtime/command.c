/* hil/runtime/command.c: motor command validation, clamping and watchdog; see command.h. */
#include "hil/runtime/command.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"

int hil_commands_init(hil_commands *c, const sim_model *m, double timeout_s,
                      hil_timeout_action on_timeout) {
  memset(c, 0, sizeof *c);
  c->model = m;
  c->count = m->nu;
  c->timeout_s = timeout_s;
  c->on_timeout = on_timeout;
  c->slots = calloc((size_t)m->nu + 1, sizeof *c->slots);
  if (!c->slots) {
    return HIL_ENOMEM;
  }
  hil_commands_clear(c);
  return HIL_OK;
}

void hil_commands_free(hil_commands *c) {
  free(c->slots);
  c->slots = NULL;
  c->count = 0;
}

void hil_commands_clear(hil_commands *c) {
  for (int i = 0; i < c->count; i++) {
    c->slots[i].value = 0;
    c->slots[i].received_at = -INFINITY;
    c->slots[i].timed_out = 0;
    c->slots[i].fresh = 0;
  }
  c->received_since_apply = 0;
}

int hil_commands_find(const hil_commands *c, const char *name) {
  const sim_model *m = c->model;
  int found = sim_model_actuator(m, name);
  if (found >= 0) {
    return found;
  }
  int joint = sim_model_joint(m, name);
  for (int i = 0; joint >= 0 && i < m->nu; i++) {
    if (m->actuators[i].joint == joint) {
      if (found >= 0) {
        return -1; /* ambiguous: several actuators drive this joint */
      }
      found = i;
    }
  }
  return found;
}

static int report(hil_commands *c, int actuator, const char *name, double value, int result,
                  int clamped) {
  if (c->observer) {
    c->observer(c->observer_user, actuator, name, value, result, clamped);
  }
  return result;
}

static int submit(hil_commands *c, int actuator, const char *name, double value, double now) {
  if (actuator < 0 || actuator >= c->count) {
    c->counters.rejected_unknown++;
    return report(c, -1, name, value, HIL_EUNKNOWN, 0);
  }
  if (!isfinite(value)) {
    c->counters.rejected_nonfinite++;
    return report(c, actuator, name, value, HIL_ENONFINITE, 0);
  }
  const double *range = c->model->actuators[actuator].ctrlrange;
  double applied = value;
  if (value < range[0] || value > range[1]) {
    applied = value < range[0] ? range[0] : range[1];
    c->counters.clamped++;
  }
  hil_command_slot *slot = &c->slots[actuator];
  slot->value = applied;
  slot->received_at = now;
  slot->timed_out = 0;
  slot->fresh = 1;
  c->counters.accepted++;
  c->received_since_apply++;
  return report(c, actuator, name, value, HIL_OK, applied != value);
}

int hil_commands_submit(hil_commands *c, int actuator, double value, double now) {
  return submit(c, actuator, NULL, value, now);
}

int hil_commands_submit_named(hil_commands *c, const char *name, double value, double now) {
  return submit(c, hil_commands_find(c, name), name, value, now);
}

void hil_commands_count_malformed(hil_commands *c) {
  c->counters.rejected_malformed++;
}

void hil_commands_apply(hil_commands *c, sim_data *d, double now) {
  for (int i = 0; i < c->count; i++) {
    hil_command_slot *slot = &c->slots[i];
    int stale = c->timeout_s > 0 && now - slot->received_at > c->timeout_s;
    if (stale && !slot->timed_out && isfinite(slot->received_at)) {
      c->counters.watchdog_trips++;
      if (c->observer && c->on_timeout == HIL_TIMEOUT_ZERO) {
        c->observer(c->observer_user, i, NULL, 0.0, HIL_COMMAND_WATCHDOG, 0);
      }
    }
    slot->timed_out = stale;
    slot->fresh = 0;
    d->ctrl[i] = stale && c->on_timeout == HIL_TIMEOUT_ZERO ? 0.0 : slot->value;
  }
  c->received_since_apply = 0;
}

int hil_commands_all_fresh(const hil_commands *c) {
  for (int i = 0; i < c->count; i++) {
    if (!c->slots[i].fresh) {
      return 0;
    }
  }
  return c->count > 0;
}
