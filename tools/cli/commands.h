/* tools/cli/commands.h: the subcommands of `achilles`. Each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit code. */
#ifndef ACHILLES_TOOLS_COMMANDS_H
#define ACHILLES_TOOLS_COMMANDS_H

int achilles_cmd_sim(int argc, char **argv);
int achilles_cmd_sensors(int argc, char **argv);
int achilles_cmd_run(int argc, char **argv);
int achilles_cmd_noise_fit(int argc, char **argv);
int achilles_cmd_replay(int argc, char **argv);
int achilles_cmd_convert(int argc, char **argv);
int achilles_cmd_test(int argc, char **argv);
int achilles_cmd_campaign(int argc, char **argv);
int achilles_cmd_sysid(int argc, char **argv);

#endif
