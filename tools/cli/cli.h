/* tools/cli/cli.h: argument helpers shared by the achilles subcommands. */
#ifndef ACHILLES_TOOLS_CLI_H
#define ACHILLES_TOOLS_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "hil/view/view.h"
#include "sim/model.h"

/* Parses a finite number; on failure writes "OPTION: expected a number, got 'TEXT'" to err. */
int cli_parse_double(const char *option, const char *text, double *out, char *err,
                     size_t err_sz);

/* Parses a finite number >= min given to OPTION; on failure prints "PROGRAM: OPTION: ..." to
 * stderr (PROGRAM e.g. "achilles run") and returns -1. */
int cli_number_at_least(const char *program, const char *option, const char *text, double min,
                        double *out);

/* SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGQUIT call handler (which should only ask a
 * loop to stop); SIGPIPE is ignored, so a reader that vanishes (a closed pty, a dead socket peer)
 * cannot kill the process, and SIGXFSZ too, so a file size limit is a write error to report. */
void cli_on_stop_signals(void (*handler)(int));

/* Parses "JOINT=VALUE" against a model's joints that have a degree of freedom. Writes the
 * joint index and value; on failure writes a message listing the valid joint names. */
int cli_parse_joint_value(const sim_model *m, const char *option, const char *text, int *joint,
                          double *value, char *err, size_t err_sz);

/* Opens FILE for writing, or stdout for "-". Returns NULL with a message on failure. */
FILE *cli_open_output(const char *path, char *err, size_t err_sz);

/* A copy of argv (calloc'ed: free it) with "--view ADDRESS:PORT" joined into
 * "--view=ADDRESS:PORT", since getopt takes an optional argument only after '='; a word joins
 * only when it reads as ADDRESS:PORT (a colon, digits after it, no '/', not an option), so
 * `--view FILE` keeps FILE. The joined string lives in `joined`; *argc is updated. NULL when out
 * of memory. Used by `run` and `replay`. */
char **cli_join_view_address(int *argc, char **argv, char *joined, size_t joined_sz);

/* `--view [ADDRESS:PORT]` of PROGRAM (e.g. "achilles run"): sets *view and, given an address,
 * parses it into o; on failure prints "PROGRAM: message" to stderr and returns -1. */
int cli_view_option(const char *program, int *view, hil_view_options *o, const char *arg);
/* --view-host NAME: a name the view answers to besides its address and localhost. */
int cli_view_host(const char *program, hil_view_options *o, const char *arg);

#endif
