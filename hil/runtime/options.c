/* hil/runtime/options.c: runtime defaults and the "runtime" section of a robot file (docs/runtime.md). */
#include "hil/runtime/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hil/config.h"
#include "hil/error.h"
#include "sim/json_read.h"

void hil_options_default(hil_options *o) {
  memset(o, 0, sizeof *o);
  o->rate_hz = 1000;
  o->mode = HIL_MODE_REALTIME;
  o->speed = 0;
  o->overrun = HIL_OVERRUN_SKIP;
  o->max_catchup = 10;
  o->cpu = -1;
  o->status_period_s = 1.0;
  o->watchdog_timeout_s = 0.1;
  o->on_timeout = HIL_TIMEOUT_ZERO;
}

/* Maps a string at obj.key onto one of `names` (NULL-terminated); absent leaves *out alone. */
static int read_choice(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                       const char *const *names, int *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  for (int i = 0; names[i] && cJSON_IsString(item); i++) {
    if (strcmp(item->valuestring, names[i]) == 0) {
      *out = i;
      return 0;
    }
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  return sim_json_fail(L, p, "expected one of \"%s\", \"%s\"%s", names[0], names[1],
                       names[2] ? ", ..." : "");
}

static int parse_watchdog(const sim_json_ctx *L, const cJSON *obj, hil_options *o) {
  static const char *const keys[] = {"timeout_s", "on_timeout", "comment", NULL};
  static const char *const actions[] = {"zero", "hold", NULL};
  const char *path = "runtime.watchdog";
  int action = (int)o->on_timeout;
  if (sim_json_expect_object(L, obj, path) || sim_json_check_keys(L, obj, path, keys) ||
      sim_json_read_number(L, obj, path, "timeout_s", &o->watchdog_timeout_s, 0) ||
      sim_json_check_min(L, path, "timeout_s", o->watchdog_timeout_s, 0, 0) ||
      read_choice(L, obj, path, "on_timeout", actions, &action)) {
    return -1;
  }
  o->on_timeout = (hil_timeout_action)action;
  return 0;
}

static int parse_runtime(const sim_json_ctx *L, const cJSON *rt, hil_options *o) {
  static const char *const keys[] = {"rate_hz",         "mode",     "speed",   "overrun",
                                     "max_catchup",     "seed",     "watchdog", "comment",
                                     "status_period_s", "spin_us",  NULL};
  static const char *const modes[] = {"realtime", "lockstep", "fast", NULL};
  static const char *const policies[] = {"skip", "catchup", NULL};
  const char *path = "runtime";
  int mode = (int)o->mode, policy = (int)o->overrun;
  double catchup = o->max_catchup, seed = -1, spin_us = o->spin_s * 1e6;
  if (sim_json_expect_object(L, rt, path) || sim_json_check_keys(L, rt, path, keys) ||
      sim_json_read_number(L, rt, path, "rate_hz", &o->rate_hz, 0) ||
      sim_json_check_min(L, path, "rate_hz", o->rate_hz, HIL_RATE_MIN_HZ, 0) ||
      sim_json_check_max(L, path, "rate_hz", o->rate_hz, HIL_RATE_MAX_HZ) ||
      read_choice(L, rt, path, "mode", modes, &mode) ||
      sim_json_read_number(L, rt, path, "speed", &o->speed, 0) ||
      sim_json_check_min(L, path, "speed", o->speed, 0, 0) ||
      read_choice(L, rt, path, "overrun", policies, &policy) ||
      sim_json_read_number(L, rt, path, "max_catchup", &catchup, 0) ||
      sim_json_check_min(L, path, "max_catchup", catchup, 0, 0) ||
      sim_json_read_number(L, rt, path, "status_period_s", &o->status_period_s, 0) ||
      sim_json_check_min(L, path, "status_period_s", o->status_period_s, 0, 0) ||
      sim_json_read_number(L, rt, path, "seed", &seed, 0) ||
      sim_json_read_number(L, rt, path, "spin_us", &spin_us, 0) ||
      sim_json_check_min(L, path, "spin_us", spin_us, 0, 0)) {
    return -1;
  }
  o->spin_s = fmin(spin_us, 1e6) * 1e-6;
  if (seed != -1) {
    if (seed < 0 || seed != floor(seed) || seed > 9007199254740992.0) {
      return sim_json_fail(L, "runtime.seed", "expected an integer from 0 to 2^53 (got %g)", seed);
    }
    o->seed = (uint64_t)seed, o->has_seed = 1;
  }
  o->mode = (hil_mode)mode;
  o->overrun = (hil_overrun)policy;
  o->max_catchup = (int)fmin(catchup, 1e6);
  const cJSON *watchdog = cJSON_GetObjectItemCaseSensitive(rt, "watchdog");
  return watchdog ? parse_watchdog(L, watchdog, o) : 0;
}

int hil_options_parse(hil_options *o, const char *config_path, char *err, size_t err_sz) {
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (root) {
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(root, "runtime");
    if (rt && parse_runtime(&L, rt, o)) {
      rc = HIL_ECONFIG;
    }
  }
  cJSON_Delete(root);
  return rc;
}
