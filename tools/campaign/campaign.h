/* tools/campaign/campaign.h: `achilles campaign` — one scenario (or several) run over a matrix of
 * seeds and overrides, each run one `achilles test`, on a pool of local processes or a Slurm
 * cluster, then gathered into tables and plots (format: docs/testing-firmware.md, "Campaigns").
 *
 * A campaign is above everything else: it never steps a robot itself. It expands the matrix into
 * runs with stable ids (from the scenario's name and each axis's value label, so adding a value
 * never renames the other runs), writes each run's scenario into OUT/runs/ID/scenario.json, and
 * hands the runs to a backend. Both backends start the same command for a run (campaign_run_*
 * below), so a run's result does not depend on where it ran.
 *
 * Ownership: campaign_load fills a campaign the caller releases with campaign_free.
 */
#ifndef ACHILLES_TOOLS_CAMPAIGN_H
#define ACHILLES_TOOLS_CAMPAIGN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#define CAMPAIGN_PATH_MAX 1024
#define CAMPAIGN_NAME_MAX 128
#define CAMPAIGN_MAX_AXES 8
#define CAMPAIGN_MAX_ARGS 64

typedef struct campaign_value {
  char label[64];  /* in the run id and the tables */
  int numeric;     /* the label is a number (the axis can be plotted) */
  double number;
  cJSON *set;      /* {JSON pointer: value, ...} applied to the scenario */
} campaign_value;

typedef struct campaign_axis {
  char name[64];
  int seed;        /* its path is /seed: no table or plot of its own */
  int nvalues;
  campaign_value *values;
} campaign_axis;

typedef struct campaign_run {
  char id[256];
  int scenario;                  /* index into the campaign's scenarios */
  int value[CAMPAIGN_MAX_AXES];  /* the value of each axis */
  uint64_t digest;               /* its inputs (hil_scenario_inputs_digest) */
  double time_limit_s;           /* the scenario's own wall-clock limit */
} campaign_run;

typedef struct campaign_slurm_options {
  int chunk;                     /* runs per array task (0: as many tasks as workers * 4) */
  char partition[64];
  char time[32];                 /* --time of each task, e.g. "00:10:00" ("" none) */
  int nextra;
  char *extra[16];               /* more sbatch options, as given */
} campaign_slurm_options;

typedef struct campaign {
  char name[CAMPAIGN_NAME_MAX];
  char spec[CAMPAIGN_PATH_MAX];     /* the spec file, for messages */
  char out[CAMPAIGN_PATH_MAX];      /* the campaign's folder (absolute) */
  char achilles[CAMPAIGN_PATH_MAX]; /* this binary: what every run starts */
  int nscenarios;
  char scenario_name[8][CAMPAIGN_NAME_MAX];
  char scenario_dir[8][CAMPAIGN_PATH_MAX];
  cJSON *base[8];                   /* each scenario's JSON, "extends" resolved */
  int fw_argc;
  char *fw_argv[CAMPAIGN_MAX_ARGS]; /* the firmware command in place of the scenarios' (or 0) */
  int naxes;
  campaign_axis axes[CAMPAIGN_MAX_AXES];
  int nruns;
  campaign_run *runs;
  int workers;                      /* local processes at once (0: one per core) */
  campaign_slurm_options slurm;
} campaign;

/* Set by a Ctrl-C handler: backends stop starting runs and end the ones running. */
extern volatile sig_atomic_t campaign_interrupted;

/* --- the plan (spec.c) ------------------------------------------------------------------------ */

/* Reads SPEC.json and expands its matrix; out: the campaign's folder (NULL: NAME.campaign next
 * to the current folder). 0, or -1 with "SPEC: PATH: what" in err. */
int campaign_load(campaign *c, const char *spec_path, const char *out, char *err, size_t err_sz);
void campaign_free(campaign *c);
/* Writes OUT/runs/ID/scenario.json for every run (write = 1; a Slurm task reads the submitter's:
 * write = 0) and computes each run's digest and time limit from it. 0 or -1. */
int campaign_prepare_runs(campaign *c, int write, char *err, size_t err_sz);
/* Folder and files of a run. */
void campaign_run_path(const campaign *c, int i, const char *file, char *out, size_t out_sz);
/* Run i's result.json parsed (the caller deletes it), NULL when it has none. */
cJSON *campaign_read_result(const campaign *c, int i);
/* 1 when run i has a result of the same inputs that was not interrupted. */
int campaign_run_done(const campaign *c, int i);
/* 1 when that result passed. */
int campaign_run_passed(const campaign *c, int i);
/* The command that reproduces run i alone, as shell words (for the summary). */
void campaign_run_command(const campaign *c, int i, char *out, size_t out_sz);
/* The index of the run with this id, -1 when none. */
int campaign_find_run(const campaign *c, const char *id);

/* --- one run (run_one.c) ---------------------------------------------------------------------- */

typedef struct campaign_child {
  pid_t pid;
  int run;
  double started; /* monotonic s */
  double limit;   /* monotonic s after which it is killed */
} campaign_child;

/* Starts `achilles test` for run i (its output into OUT/runs/ID/output.txt). 0 or -1. */
int campaign_run_start(const campaign *c, int i, campaign_child *ch, char *err, size_t err_sz);
/* After it ended with waitpid status `status` (or was killed at its limit): when it left no
 * result (it crashed, hung, or the scenario was refused), writes one saying so, a failed run.
 * Returns 1 when the run counts as done (0 for an interrupted one). */
int campaign_run_finish(const campaign *c, const campaign_child *ch, int status, int timed_out);
/* Writes run i's result as a failed run that left none, saying why. */
void campaign_run_fail(const campaign *c, int i, const char *why);
/* Runs run i to its end in this process (what a Slurm task does for each of its runs). */
int campaign_run_wait(const campaign *c, int i, char *err, size_t err_sz);

double campaign_now(void);

/* --- backends (local.c, slurm.c) ------------------------------------------------------------- */

/* Progress of the runs (progress.c): a bar with the rate and the time left on a terminal, a line
 * every 10 % otherwise. */
typedef struct campaign_progress {
  int total, done, failed, start_done;
  double start, last_print;
  int tty;
} campaign_progress;

void campaign_progress_begin(campaign_progress *p, int total, int done);
void campaign_progress_step(campaign_progress *p, int done, int force);
void campaign_progress_end(campaign_progress *p);

/* A backend runs the runs todo[0..n) of c to their end. 0 when they ran, 130 when interrupted,
 * -1 with a message when the backend itself failed. */
typedef struct campaign_backend {
  const char *name;
  int (*run)(campaign *c, const int *todo, int n, campaign_progress *p, char *err,
             size_t err_sz);
} campaign_backend;

extern const campaign_backend campaign_local_backend;
extern const campaign_backend campaign_slurm_backend;

/* What a Slurm array task runs: the runs of chunk k (OUT/slurm/chunk-K.txt), one after the
 * other; a marker OUT/slurm/done-K at the end. Returns the task's exit status. */
int campaign_slurm_task(campaign *c, int k);

/* --- gathering (gather.c) ------------------------------------------------------------------- */

/* Reads every run's result and writes OUT/results.csv, OUT/summary.md (pass rates per axis
 * value, the worst runs with their seeds and commands) and OUT/plots/ (gnuplot: pass rate and
 * each check's measured value against each numeric axis; PNGs when gnuplot runs). Prints the
 * summary's first lines. *failed: the runs that failed. 0 or -1 with a message. */
int campaign_gather(const campaign *c, int *failed, char *err, size_t err_sz);
/* JUnit XML of every run (one testsuite each, named by its id). */
int campaign_junit(const campaign *c, const char *path, char *err, size_t err_sz);

#endif
