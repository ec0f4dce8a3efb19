/* tools/cli/achilles.c: the `achilles` command, dispatching to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct subcommand {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"run", achilles_cmd_run, "the hardware-in-the-loop runtime: real-time arm, sensors out, commands in"},
    {"sim", achilles_cmd_sim, "batch simulation of a robot description, CSV out"},
    {"sensors", achilles_cmd_sensors, "batch simulation with sensor models, true and measured CSV"},
    {"replay", achilles_cmd_replay,
     "a recorded log or CSV sent to firmware with its original timing (ZeroMQ or serial)"},
    {"noise-fit", achilles_cmd_noise_fit,
     "noise parameters of a sensor from a log or CSV, as sensor JSON, with plots"},
    {"convert", achilles_cmd_convert, "an MJCF or URDF robot file into the native robot JSON"},
    {"test", achilles_cmd_test, "a firmware test: a scenario's events and checks, a verdict"},
    {"campaign", achilles_cmd_campaign,
     "a scenario over seeds, noise and faults: local processes or Slurm, tables and plots"},
    {"sysid", achilles_cmd_sysid,
     "a robot's damping, friction, inertias, motor figures fitted to a log or CSV of the arm"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: achilles COMMAND [OPTIONS]\n\n"
               "Achilles, a robot sensor and hardware-in-the-loop simulator.\n\ncommands:\n");
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
    fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
  }
  fprintf(out, "\nRun 'achilles COMMAND --help' for the options of one command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("achilles 0.1.0\n");
    return 0;
  }
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
    if (strcmp(argv[1], subcommands[i].name) == 0) {
      return subcommands[i].run(argc - 1, argv + 1);
    }
  }
  fprintf(stderr, "achilles: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
