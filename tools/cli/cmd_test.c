/* tools/cli/cmd_test.c: `achilles test SCENARIO.json [-- FIRMWARE COMMAND...]`, a firmware test
 * with a verdict (hil/scenario, docs/testing-firmware.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "hil/error.h"
#include "hil/scenario/scenario.h"

/* Exit status: 0 every check passed, 1 a check failed (a crashed or hung firmware included),
 * 2 the scenario or the command line is wrong, or the run could not start. */
enum { TEST_PASS = 0, TEST_FAIL = 1, TEST_WRONG = 2 };

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles test SCENARIO.json [options] [-- FIRMWARE COMMAND...]\n\n"
          "Runs a firmware test: the scenario's robot (lockstep unless it says otherwise), its\n"
          "firmware as a process, a timeline of events at simulated times (pushes, sensor and\n"
          "link faults, parameter changes, input to the firmware) and checks of what happened.\n"
          "A command after -- replaces the scenario's firmware command ({serial}, {servo_bus},\n"
          "{zmq.pub}, {zmq.cmd}, {zmq.ctl} become the paths it talks over).\n"
          "Format and results: docs/testing-firmware.md.\n\n"
          "Writes OUT/result.json (every check's measured value and verdict), OUT/run.log (the\n"
          "recording, docs/logs.md) and OUT/firmware.log (what the firmware printed).\n"
          "Exit status: 0 when every check passed, 1 when one failed (a firmware that crashed,\n"
          "died or hung included), 2 when the scenario is wrong (the message names the field) or\n"
          "the run cannot start.\n\n"
          "options:\n"
          "  --out DIR      the run's folder (default achilles-results/NAME)\n"
          "  --junit FILE   also the result as JUnit XML (GitHub, GitLab test reports)\n"
          "  --id ID        a run id, copied into the result (what campaigns use)\n"
          "  --verbose      the firmware's output on stderr too\n"
          "  --quiet        no summary on stdout\n"
          "  -h, --help     this text\n");
}

static void on_signal(int sig) {
  (void)sig;
  hil_scenario_interrupt();
}

typedef struct test_args {
  const char *scenario, *out, *junit, *id;
  int verbose, quiet;
  int fw_argc;
  char **fw_argv;
} test_args;

static int parse_args(test_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"out", required_argument, NULL, 'o'},   {"junit", required_argument, NULL, 'j'},
      {"id", required_argument, NULL, 'i'},    {"verbose", no_argument, NULL, 'v'},
      {"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  int dash = argc;
  for (int i = 1; i < argc; i++) { /* what follows -- is the firmware's, untouched */
    if (strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  }
  int opt;
  optind = 1;
  while ((opt = getopt_long(dash, argv, "hq", options, NULL)) != -1) {
    switch (opt) {
    case 'o':
      a->out = optarg;
      break;
    case 'j':
      a->junit = optarg;
      break;
    case 'i':
      a->id = optarg;
      break;
    case 'v':
      a->verbose = 1;
      break;
    case 'q':
      a->quiet = 1;
      break;
    case 'h':
      usage(stdout);
      return 1;
    default:
      fprintf(stderr, "Run 'achilles test --help' for usage.\n");
      return -1;
    }
  }
  if (optind != dash - 1) {
    fprintf(stderr, "achilles test: expected exactly one SCENARIO file%s\n",
            optind < dash - 1 ? " (the firmware's command goes after --)" : "");
    return -1;
  }
  a->scenario = argv[optind];
  if (dash < argc) {
    a->fw_argc = argc - dash - 1;
    a->fw_argv = argv + dash + 1;
    if (a->fw_argc == 0) {
      fprintf(stderr, "achilles test: nothing after --: expected the firmware's command\n");
      return -1;
    }
  }
  return 0;
}

int achilles_cmd_test(int argc, char **argv) {
  test_args a;
  const int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? TEST_PASS : TEST_WRONG;
  }
  char err[2048];
  hil_scenario *s = NULL;
  if (hil_scenario_load(&s, a.scenario, err, sizeof err) != HIL_OK ||
      (a.fw_argc > 0 && hil_scenario_set_command(s, a.fw_argc, a.fw_argv, err, sizeof err))) {
    fprintf(stderr, "achilles test: %s\n", err);
    hil_scenario_free(&s);
    return TEST_WRONG;
  }
  char out[1024];
  snprintf(out, sizeof out, "%s", a.out ? a.out : "achilles-results/");
  if (!a.out) {
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s", hil_scenario_name(s));
  }
  cli_on_stop_signals(on_signal);
  const hil_scenario_run_options ro = {out, a.id, a.verbose};
  cJSON *result = NULL;
  const int rc = hil_scenario_run(s, &ro, &result, err, sizeof err);
  hil_scenario_free(&s);
  if (!result) {
    fprintf(stderr, "achilles test: %s\n", err);
    return TEST_WRONG;
  }
  if (rc != HIL_OK) { /* ran, but result.json could not be written */
    fprintf(stderr, "achilles test: %s\n", err);
  }
  if (!a.quiet) {
    hil_scenario_print_summary(stdout, result);
    printf("  files: %s/result.json, %s/run.log\n", out, out);
  }
  int status = hil_scenario_result_passed(result) ? TEST_PASS : TEST_FAIL;
  const cJSON *const one[1] = {result};
  if (a.junit && hil_scenario_write_junit(a.junit, one, 1, err, sizeof err) != 0) {
    fprintf(stderr, "achilles test: --junit: %s\n", err);
    status = TEST_FAIL;
  }
  cJSON_Delete(result);
  return rc == HIL_OK ? status : TEST_FAIL;
}
