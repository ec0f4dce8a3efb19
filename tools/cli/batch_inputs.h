/* tools/cli/batch_inputs.h: what `achilles sim` and `achilles sensors` hold for a batch run: the
 * initial state (--qpos, --qvel) and constant inputs (--torque on a joint, --ctrl on an
 * actuator), given as NAME=VALUE on the command line and applied to a loaded model's data. */
#ifndef ACHILLES_TOOLS_BATCH_INPUTS_H
#define ACHILLES_TOOLS_BATCH_INPUTS_H

#include <stddef.h>

#include "sim/data.h"
#include "sim/model.h"

#define BATCH_INPUTS_MAX 64 /* of each kind */

typedef enum batch_input_kind {
  BATCH_TORQUE = 0, /* --torque JOINT=VALUE: constant generalized force, N·m or N */
  BATCH_QPOS = 1,   /* --qpos JOINT=VALUE: initial position, rad or m */
  BATCH_QVEL = 2,   /* --qvel JOINT=VALUE: initial velocity, rad/s or m/s */
  BATCH_CTRL = 3,   /* --ctrl ACTUATOR=VALUE: constant command, in the actuator's unit */
  BATCH_KINDS = 4
} batch_input_kind;

typedef struct batch_inputs {
  const char *text[BATCH_KINDS][BATCH_INPUTS_MAX]; /* the arguments, as given (not copied) */
  int n[BATCH_KINDS];
} batch_inputs;

/* Keeps one NAME=VALUE argument; -1 with "at most 64 --ctrl options" in err when full. */
int batch_inputs_add(batch_inputs *b, batch_input_kind kind, const char *arg, char *err,
                     size_t err_sz);

/* getopt_long entries of the four options, with their letters 'T', 'Q', 'V' and 'C' */
#define BATCH_INPUTS_OPTIONS                                                                     \
  {"torque", required_argument, NULL, 'T'}, {"qpos", required_argument, NULL, 'Q'},             \
      {"qvel", required_argument, NULL, 'V'}, {"ctrl", required_argument, NULL, 'C'}

/* Keeps the argument of option letter opt when it is one of the four: 1 (err set when the list
 * is full), else 0 (not one of them). */
int batch_inputs_option(batch_inputs *b, int opt, const char *arg, char *err, size_t err_sz);

/* Applies every kept argument to d (then sim_forward, so derived values match the state): a
 * joint must be a hinge or a slide, an actuator one of the model's, a command within its
 * ctrlrange. -1 with a message naming the option and what was expected, for example
 *   --ctrl: unknown actuator 'grip' (actuators: base_motor, shoulder_motor)
 *   --ctrl: 'motor' takes commands in [-1, 1] (its ctrlrange), got 3 */
int batch_inputs_apply(const batch_inputs *b, const sim_model *m, sim_data *d, char *err,
                       size_t err_sz);

#endif
