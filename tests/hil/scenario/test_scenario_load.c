/* tests/hil/scenario/test_scenario_load.c: a scenario that cannot run is refused at load, with a
 * message naming the file and the JSON path of what is wrong (docs/testing-firmware.md), and
 * the shipped scenarios load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hil/error.h"
#include "hil/scenario/scenario.h"
#include "support/skip.h"
#include "support/tmp.h"

#define CLUB ACHILLES_SOURCE_DIR "/configs/club_arm.json"

/* s.json in the suite folder holding text; its path */
static const char *write_scenario(const char *text) {
  static char path[512];
  ts_tmp_path(path, sizeof path, "s.json");
  ts_write_file(path, text);
  return path;
}

/* loads {"robot": CLUB, "duration_s": 1, BODY} and returns its status; the message in err */
static int load(const char *body, char *err, size_t err_sz) {
  char text[8192];
  snprintf(text, sizeof text, "{\"robot\": \"%s\", \"duration_s\": 1%s%s}", CLUB,
           body[0] ? ", " : "", body);
  const char *path = write_scenario(text);
  hil_scenario *s = NULL;
  const int rc = hil_scenario_load(&s, path, err, err_sz);
  assert_true((rc == HIL_OK) == (s != NULL));
  hil_scenario_free(&s);
  return rc;
}

static void refused(const char *body, const char *message) {
  char err[1024] = "";
  const int rc = load(body, err, sizeof err);
  if (rc == HIL_OK || !strstr(err, message) || !strstr(err, "s.json")) {
    fail_msg("%s\n  -> %s (%s)\n  expected a message with \"%s\"", body, rc ? err : "loaded",
             hil_strerror(rc), message);
  }
}

static void test_minimal_loads(void **state) {
  (void)state;
  char err[512];
  assert_int_equal(load("", err, sizeof err), HIL_OK);
}

static void test_top_level(void **state) {
  (void)state;
  refused("\"duraton\": 2", "duraton: unknown key");
  refused("\"seed\": 1.5", "seed: expected an integer");
  refused("\"time_limit_s\": -1", "time_limit_s");
  refused("\"runtime\": {\"mode\": \"slow\"}", "runtime.mode: expected one of \"realtime\"");
  refused("\"runtime\": {\"watchdog\": {\"timeout_s\": -2}}", "runtime.watchdog.timeout_s");
  refused("\"extends\": 3", "extends: expected a scenario file name");
}

static void test_firmware(void **state) {
  (void)state;
  refused("\"firmware\": {\"command\": []}", "firmware.command: expected an array of 1 to");
  refused("\"firmware\": {\"command\": [\"fw\", 3]}", "firmware.command[1]: expected a string");
  refused("\"firmware\": {\"command\": [\"fw\"], \"link\": \"can\"}",
          "firmware.link: expected one of \"serial\"");
  refused("\"firmware\": {\"command\": [\"fw\"], \"replay\": \"x.log\"}", "not both");
  refused("\"firmware\": {\"link\": \"serial\"}", "firmware.command: missing");
}

static void test_timeline(void **state) {
  (void)state;
  refused("\"timeline\": [{\"t\": 1}]", "timeline[0]: expected one action");
  refused("\"timeline\": [{\"force\": {\"body\": \"forearm\", \"force\": [0, 0, 1]}}]",
          "timeline[0].t: missing");
  refused("\"timeline\": [{\"t\": 0.1, \"force\": {\"body\": \"forarm\", \"force\": [0, 0, 1]}}]",
          "timeline[0].force.body: unknown body \"forarm\"");
  refused("\"timeline\": [{\"t\": 0.1, \"force\": {\"body\": \"forearm\", \"force\": [0, 1]}}]",
          "timeline[0].force.force");
  refused("\"timeline\": [{\"t\": 0, \"force\": {\"body\": \"forearm\"}}]",
          "timeline[0].force: expected \"force\" and/or \"torque\"");
  refused("\"timeline\": [{\"t\": 0.1, \"sensor_fault\": {\"sensor\": \"enc_shoulder\", "
          "\"fault\": \"melted\"}}]", "timeline[0].sensor_fault.fault: expected one of");
  refused("\"timeline\": [{\"t\": 0.1, \"sensor_fault\": {\"sensor\": \"enc_nothing\", "
          "\"fault\": \"stuck\"}}]", "timeline[0].sensor_fault: no sensor matches \"enc_nothing\"");
  refused("\"timeline\": [{\"t\": 0.1, \"sensor_fault\": {\"sensor\": \"enc_shoulder\", "
          "\"fault\": \"spike\", \"probability\": 2}}]", "timeline[0].sensor_fault.probability");
  refused("\"timeline\": [{\"t\": 0.1, \"sensor_param\": {\"sensor\": \"enc_shoulder\", "
          "\"param\": \"noise.white.sigma\", \"value\": -1}}]", "timeline[0].sensor_param");
  refused("\"timeline\": [{\"t\": 0.1, \"link\": {\"cut\": true}}]",
          "timeline[0].link: the firmware's link is not a serial line");
  refused("\"timeline\": [{\"t\": 0.1, \"firmware\": {\"stdin\": \"x\"}}]",
          "timeline[0].firmware: the scenario starts no firmware");
  refused("\"timeline\": [{\"t\": 0.1, \"firmware\": {\"signal\": \"hup\"}}]",
          "timeline[0].firmware.signal: expected one of");
}

static void test_model_changes(void **state) {
  (void)state;
  refused("\"timeline\": [{\"t\": 0.1, \"model\": {\"joint\": \"*\", \"field\": \"colour\", "
          "\"scale\": 2}}]", "timeline[0].model.field: unknown field of a joint");
  refused("\"timeline\": [{\"t\": 0.1, \"model\": {\"joint\": \"nothing*\", \"field\": "
          "\"damping\", \"scale\": 2}}]", "timeline[0].model: no joint of club_arm matches");
  refused("\"timeline\": [{\"t\": 0.1, \"model\": {\"body\": \"forearm\", \"field\": \"mass\", "
          "\"value\": 0}}]", "timeline[0].model: body \"forearm\": mass would be 0 kg");
  refused("\"timeline\": [{\"t\": 0.1, \"model\": {\"joint\": \"*\", \"field\": \"initial\", "
          "\"value\": 0}}]", "\"initial\" only in model_overrides");
  refused("\"model_overrides\": [{\"joint\": \"*\", \"field\": \"damping\", \"scale\": 2, "
          "\"value\": 3}]", "model_overrides[0]: expected one of \"scale\"");
  refused("\"model_overrides\": [{\"joint\": \"*\", \"geom\": \"table\", \"field\": \"friction\", "
          "\"scale\": 2}]", "model_overrides[0]: expected exactly one of");
}

/* friction on a robot that has none would need constraint rows its data does not have */
static void test_new_rows_refused(void **state) {
  (void)state;
  char text[1024], err[1024];
  snprintf(text, sizeof text, "{\"robot\": \"%s/configs/two_link_arm.json\", \"duration_s\": 1,"
           " \"timeline\": [{\"t\": 0.5, \"model\": {\"joint\": \"*\", \"field\": "
           "\"frictionloss\", \"value\": 0.1}}]}", ACHILLES_SOURCE_DIR);
  hil_scenario *s = NULL;
  assert_int_equal(hil_scenario_load(&s, write_scenario(text), err, sizeof err), HIL_ECONFIG);
  assert_non_null(strstr(err, "adds constraint rows"));
}

static void test_overrides_and_checks(void **state) {
  (void)state;
  refused("\"sensor_overrides\": [{\"sensor\": \"enc_none\", \"set\": {\"rate_hz\": 500}}]",
          "sensor_overrides[0].sensor: no sensor matches");
  refused("\"sensor_overrides\": [{\"sensor\": \"enc_*\", \"set\": {\"noise.white.sigma\": -1}}]",
          "sensor_overrides: the sensors with these changes:");
  refused("\"checks\": [{\"type\": \"settled\"}]", "checks[0].type: unknown type");
  refused("\"checks\": [{\"type\": \"settle\", \"joint\": \"elbow\", \"value\": 0}]",
          "checks[0].tolerance: missing");
  refused("\"checks\": [{\"type\": \"settle\", \"joint\": \"elbow\", \"value\": 0, \"tolerance\":"
          " 1, \"of\": \"jerk\"}]", "checks[0].of: expected \"position\" or \"velocity\"");
  refused("\"checks\": [{\"type\": \"range\", \"joint\": \"elbow\"}]",
          "checks[0]: expected \"min\" and/or \"max\"");
  refused("\"checks\": [{\"type\": \"stall\", \"actuator\": \"elbow\", \"current\": 1, "
          "\"for_s\": 1}]", "checks[0]: unknown actuator \"elbow\"");
  refused("\"checks\": [{\"type\": \"watchdog\"}]", "checks[0]: expected one of \"trips\"");
  refused("\"checks\": [{\"type\": \"settle\", \"joint\": \"elbow\", \"value\": 0, \"tolerance\":"
          " 1, \"from\": 2, \"to\": 1}]", "checks[0].to: must not be before");
  refused("\"checks\": [{\"type\": \"overshoot\", \"joint\": \"elbow\", \"target\": 1, \"max\": "
          "1, \"tolerance\": 2}]", "checks[0].tolerance: unknown key");
  refused("\"checks\": [{\"type\": \"output\", \"match\": \"homed\"}]",
          "checks[0]: the scenario starts no firmware");
}

/* the shipped scenarios load, named from the source folder (relative paths: a twin's base and
 * the base's robot resolve from the files' folders, not from the current one) */
static void test_shipped_scenarios_load(void **state) {
  (void)state;
  char cwd[1024];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(ACHILLES_SOURCE_DIR), 0);
  const char *names[] = {"hold_push", "hold_push_wrong_sign", "homing_hard_stop",
                         "homing_stop_sign", "watchdog_stops_arm", "watchdog_no_feed",
                         "servo_bus_turn", "servo_bus_wrong_direction"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[512], err[1024];
    snprintf(path, sizeof path, "configs/scenarios/%s.json", names[i]);
    hil_scenario *s = NULL;
    if (hil_scenario_load(&s, path, err, sizeof err) != HIL_OK) {
      fail_msg("%s", err);
    }
    assert_string_equal(hil_scenario_name(s), names[i]);
    hil_scenario_free(&s);
  }
  assert_int_equal(chdir(cwd), 0);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_minimal_loads, test_top_level, test_firmware, test_timeline,
        test_model_changes, test_new_rows_refused, test_overrides_and_checks,
        test_shipped_scenarios_load)
