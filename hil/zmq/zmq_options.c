/* hil/zmq/zmq_options.c: the ZeroMQ transport's options: defaults, the robot file's
 * "transports.zmq" section, and the endpoint checks (local only unless allowed); see
 * zmq_transport.h. */
#include "hil/zmq/zmq_options.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hil/config.h"
#include "hil/error.h"
#include "sim/json_read.h"

const char *const hil__zmq_socket_key[HIL_ZMQ_NSOCK] = {"pub", "cmd", "ctl"};

void hil_zmq_options_default(hil_zmq_options *o) {
  memset(o, 0, sizeof *o);
  o->enabled = 1;
  snprintf(o->pub, sizeof o->pub, "tcp://127.0.0.1:5555");
  snprintf(o->cmd, sizeof o->cmd, "tcp://127.0.0.1:5556");
  snprintf(o->ctl, sizeof o->ctl, "tcp://127.0.0.1:5557");
  o->truth = 1;
  o->allow_remote = 0;
  o->sndhwm = 1000;
  o->max_message_bytes = 65536;
  o->io_cpu = -1;
  o->io_priority = 0;
}

const char *hil__zmq_option_endpoint(const hil_zmq_options *o, int which) {
  const char *const eps[HIL_ZMQ_NSOCK] = {o->pub, o->cmd, o->ctl};
  return eps[which];
}

/* ipc://, inproc://, or tcp:// on 127.0.0.1, localhost or the loopback interface "lo". */
static int endpoint_is_local(const char *ep) {
  static const char *const hosts[] = {"127.0.0.1", "localhost", "lo", NULL};
  if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) {
    return 1;
  }
  if (strncmp(ep, "tcp://", 6) != 0) {
    return 0;
  }
  const char *host = ep + 6, *colon = strrchr(host, ':');
  if (!colon) {
    return 0;
  }
  for (const char *const *h = hosts; *h; h++) {
    if (strlen(*h) == (size_t)(colon - host) && strncmp(host, *h, (size_t)(colon - host)) == 0) {
      return 1;
    }
  }
  return 0;
}

/* The endpoint checks, with messages prefixed by `source` (a file name, or NULL). */
static int check_options(const hil_zmq_options *o, const char *source, char *err, size_t err_sz) {
  const char *sep = source ? ": " : "";
  source = source ? source : "";
  for (int i = 0; i < HIL_ZMQ_NSOCK; i++) {
    const char *ep = hil__zmq_option_endpoint(o, i);
    if (!ep[0]) {
      snprintf(err, err_sz, "%s%stransports.zmq.%s: empty endpoint", source, sep, hil__zmq_socket_key[i]);
      return HIL_ECONFIG;
    }
    if (!o->allow_remote && !endpoint_is_local(ep)) {
      snprintf(err, err_sz,
               "%s%stransports.zmq.%s: \"%s\" is not a local endpoint (127.0.0.1, localhost, "
               "ipc://, inproc://); set transports.zmq.allow_remote to true to bind it",
               source, sep, hil__zmq_socket_key[i], ep);
      return HIL_ECONFIG;
    }
  }
  if (o->sndhwm < 1 || o->max_message_bytes < 256) {
    snprintf(err, err_sz, "%s%stransports.zmq.%s: too small", source, sep,
             o->sndhwm < 1 ? "sndhwm" : "max_message_bytes");
    return HIL_ECONFIG;
  }
  return HIL_OK;
}

int hil_zmq_options_check(const hil_zmq_options *o, char *err, size_t err_sz) {
  return check_options(o, NULL, err, err_sz);
}

static int read_bool(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                     int *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  if (!cJSON_IsBool(item)) {
    char p[SIM_JSON_PATH_MAX];
    sim_json_path_join(p, path, key);
    return sim_json_fail(L, p, "expected true or false");
  }
  *out = cJSON_IsTrue(item);
  return 0;
}

static int read_endpoint(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, char out[HIL_ZMQ_ENDPOINT_MAX]) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    return 0;
  }
  char p[SIM_JSON_PATH_MAX];
  sim_json_path_join(p, path, key);
  if (!cJSON_IsString(item) || !item->valuestring[0] ||
      strlen(item->valuestring) >= HIL_ZMQ_ENDPOINT_MAX) {
    return sim_json_fail(L, p, "expected an endpoint such as \"tcp://127.0.0.1:5555\" or "
                               "\"ipc:///tmp/achilles.pub\" (at most %d characters)",
                         HIL_ZMQ_ENDPOINT_MAX - 1);
  }
  snprintf(out, HIL_ZMQ_ENDPOINT_MAX, "%s", item->valuestring);
  return 0;
}

static int parse_zmq(const sim_json_ctx *L, const cJSON *z, hil_zmq_options *o) {
  static const char *const keys[] = {"enabled",      "pub",    "cmd",
                                     "ctl",          "truth",  "allow_remote",
                                     "sndhwm",       "max_message_bytes", "comment", NULL};
  const char *path = "transports.zmq";
  if (sim_json_expect_object(L, z, path) || sim_json_check_keys(L, z, path, keys) ||
      read_bool(L, z, path, "enabled", &o->enabled) ||
      read_endpoint(L, z, path, "pub", o->pub) || read_endpoint(L, z, path, "cmd", o->cmd) ||
      read_endpoint(L, z, path, "ctl", o->ctl) || read_bool(L, z, path, "truth", &o->truth) ||
      read_bool(L, z, path, "allow_remote", &o->allow_remote) ||
      sim_json_read_int(L, z, path, "sndhwm", 1, 10000000, &o->sndhwm) ||
      sim_json_read_int(L, z, path, "max_message_bytes", 256, 64 * 1024 * 1024,
                        &o->max_message_bytes)) {
    return -1;
  }
  return 0;
}

int hil_zmq_options_parse(hil_zmq_options *o, const char *config_path, char *err, size_t err_sz) {
  hil_zmq_options_default(o);
  const sim_json_ctx L = {config_path, err, err_sz};
  cJSON *root;
  int rc = hil_config_parse(&root, config_path, err, err_sz);
  if (root) {
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "transports");
    const cJSON *z = tr ? cJSON_GetObjectItemCaseSensitive(tr, "zmq") : NULL;
    if (tr && sim_json_expect_object(&L, tr, "transports")) {
      rc = HIL_ECONFIG;
    } else if (z && parse_zmq(&L, z, o)) {
      rc = HIL_ECONFIG;
    } else if (check_options(o, config_path, err, err_sz) != HIL_OK) {
      rc = HIL_ECONFIG;
    }
  }
  cJSON_Delete(root);
  return rc;
}
