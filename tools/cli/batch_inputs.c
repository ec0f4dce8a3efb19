/* tools/cli/batch_inputs.c: --torque, --qpos, --qvel and --ctrl of the batch commands; see
 * batch_inputs.h. */
#include "batch_inputs.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim/sim.h"

static const char *const option_name[BATCH_KINDS] = {"--torque", "--qpos", "--qvel", "--ctrl"};

int batch_inputs_add(batch_inputs *b, batch_input_kind kind, const char *arg, char *err,
                     size_t err_sz) {
  if (b->n[kind] >= BATCH_INPUTS_MAX) {
    snprintf(err, err_sz, "at most %d %s options", BATCH_INPUTS_MAX, option_name[kind]);
    return -1;
  }
  b->text[kind][b->n[kind]++] = arg;
  return 0;
}

int batch_inputs_option(batch_inputs *b, int opt, const char *arg, char *err, size_t err_sz) {
  static const char letters[BATCH_KINDS] = {'T', 'Q', 'V', 'C'};
  for (int kind = 0; kind < BATCH_KINDS; kind++) {
    if (opt == letters[kind]) {
      batch_inputs_add(b, (batch_input_kind)kind, arg, err, err_sz);
      return 1;
    }
  }
  return 0;
}

static void list_actuators(const sim_model *m, char *out, size_t out_sz) {
  out[0] = '\0';
  for (int a = 0; a < m->nu; a++) {
    const size_t used = strlen(out);
    snprintf(out + used, out_sz - used, "%s%s", used ? ", " : "", m->actuators[a].name);
  }
}

/* "ACTUATOR=VALUE" against the model's actuators and the actuator's ctrlrange */
static int parse_ctrl(const sim_model *m, const char *text, int *actuator, double *value,
                      char *err, size_t err_sz) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text) {
    snprintf(err, err_sz, "--ctrl: expected ACTUATOR=VALUE, got '%s'", text);
    return -1;
  }
  char name[SIM_NAME_MAX];
  snprintf(name, sizeof name, "%.*s", (int)(eq - text), text);
  const int a = sim_model_actuator(m, name);
  if (a < 0) {
    char names[512];
    list_actuators(m, names, sizeof names);
    snprintf(err, err_sz, "--ctrl: unknown actuator '%s' (actuators: %s)", name,
             m->nu ? names : "none");
    return -1;
  }
  if (cli_parse_double("--ctrl", eq + 1, value, err, err_sz)) {
    return -1;
  }
  const double *range = m->actuators[a].ctrlrange;
  if (*value < range[0] || *value > range[1]) {
    snprintf(err, err_sz, "--ctrl: '%s' takes commands in [%g, %g] (its ctrlrange), got %s",
             name, range[0], range[1], eq + 1);
    return -1;
  }
  *actuator = a;
  return 0;
}

int batch_inputs_apply(const batch_inputs *b, const sim_model *m, sim_data *d, char *err,
                       size_t err_sz) {
  for (int kind = 0; kind < BATCH_KINDS; kind++) {
    for (int k = 0; k < b->n[kind]; k++) {
      int index;
      double value;
      if (kind == BATCH_CTRL) {
        if (parse_ctrl(m, b->text[kind][k], &index, &value, err, err_sz)) {
          return -1;
        }
        d->ctrl[index] = value;
        continue;
      }
      if (cli_parse_joint_value(m, option_name[kind], b->text[kind][k], &index, &value, err,
                                err_sz)) {
        return -1;
      }
      const sim_joint *j = &m->joints[index];
      if (kind == BATCH_TORQUE) {
        d->qfrc_applied[j->dofadr] = value;
      } else if (kind == BATCH_QPOS) {
        d->qpos[j->qposadr] = value;
      } else {
        d->qvel[j->dofadr] = value;
      }
    }
  }
  sim_forward(m, d);
  return 0;
}
