/* tools/cli/cmd_campaign.c: `achilles campaign SPEC.json`, a scenario run over a matrix of seeds
 * and overrides on this machine or a Slurm cluster, then gathered (tools/campaign,
 * docs/testing-firmware.md). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "cli.h"
#include "commands.h"

/* Exit status: 0 every run passed, 1 a run failed, 2 the spec or the command line is wrong (or a
 * backend could not run), 130 interrupted. */
enum { CAMPAIGN_PASS = 0, CAMPAIGN_FAIL = 1, CAMPAIGN_WRONG = 2, CAMPAIGN_INTERRUPTED = 130 };

static void usage(FILE *out) {
  fprintf(out,
          "usage: achilles campaign SPEC.json [options]\n\n"
          "Runs a scenario over a matrix of seeds and overrides (noise, friction, mass, latency,\n"
          "faults): every combination is one `achilles test` with a stable id, on a pool of local\n"
          "processes or as a Slurm array job; then tables (CSV, Markdown), the worst runs with\n"
          "the command that reproduces each, and plots (gnuplot). Format:\n"
          "docs/testing-firmware.md.\n\n"
          "Writes OUT/runs/ID/ (each run's scenario.json, result.json, logs), OUT/results.csv,\n"
          "OUT/summary.md and OUT/plots/. Ctrl-C stops cleanly; --resume goes on from there.\n"
          "Exit status: 0 when every run passed, 1 when a run failed, 2 when the spec is wrong\n"
          "(the message names the field) or the backend cannot run, 130 when interrupted.\n\n"
          "options:\n"
          "  --out DIR        the campaign's folder (default NAME.campaign)\n"
          "  --workers N      local runs at once (default: the spec's, else one per core)\n"
          "  --backend B      local (default) | slurm (sbatch --array; OUT and this program on a\n"
          "                   folder every node sees)\n"
          "  --chunk N        slurm: runs per array task (default: the spec's, else 10)\n"
          "  --resume         skip the runs already done with the same inputs\n"
          "  --gather         no runs: gather the results already in OUT\n"
          "  --junit FILE     also every run's checks as JUnit XML\n"
          "  --slurm-task K   what array task K runs (written into OUT/slurm/job.sh)\n"
          "  -h, --help       this text\n");
}

static void on_signal(int sig) {
  (void)sig;
  campaign_interrupted = 1;
}

typedef struct campaign_args {
  const char *spec, *out, *backend, *junit;
  int workers, chunk, resume, gather, task;
} campaign_args;

static int parse_args(campaign_args *a, int argc, char **argv) {
  static const struct option options[] = {
      {"out", required_argument, NULL, 'o'},     {"workers", required_argument, NULL, 'w'},
      {"backend", required_argument, NULL, 'b'}, {"chunk", required_argument, NULL, 'c'},
      {"resume", no_argument, NULL, 'r'},        {"gather", no_argument, NULL, 'g'},
      {"junit", required_argument, NULL, 'j'},   {"slurm-task", required_argument, NULL, 't'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  memset(a, 0, sizeof *a);
  a->task = -1;
  a->backend = "local";
  double v;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    if (opt == 'o') {
      a->out = optarg;
    } else if (opt == 'w' || opt == 'c' || opt == 't') {
      const char *name = opt == 'w' ? "--workers" : opt == 'c' ? "--chunk" : "--slurm-task";
      if (cli_number_at_least("achilles campaign", name, optarg, opt == 't' ? 0 : 1, &v)) {
        return -1;
      }
      *(opt == 'w' ? &a->workers : opt == 'c' ? &a->chunk : &a->task) = (int)v;
    } else if (opt == 'b') {
      a->backend = optarg;
      if (strcmp(optarg, "local") != 0 && strcmp(optarg, "slurm") != 0) {
        fprintf(stderr, "achilles campaign: --backend: local or slurm (got '%s')\n", optarg);
        return -1;
      }
    } else if (opt == 'r') {
      a->resume = 1;
    } else if (opt == 'g') {
      a->gather = 1;
    } else if (opt == 'j') {
      a->junit = optarg;
    } else if (opt == 'h') {
      usage(stdout);
      return 1;
    } else {
      fprintf(stderr, "Run 'achilles campaign --help' for usage.\n");
      return -1;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "achilles campaign: expected exactly one SPEC file\n");
    return -1;
  }
  a->spec = argv[optind];
  return 0;
}

/* the runs to do (all, or those without a result of the same inputs) and the run itself */
static int run_all(campaign *c, const campaign_args *a, char *err, size_t err_sz) {
  int *todo = calloc((size_t)c->nruns + 1, sizeof *todo), n = 0, done = 0;
  if (!todo) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  for (int i = 0; i < c->nruns; i++) {
    if (a->resume && campaign_run_done(c, i)) {
      done++;
    } else {
      todo[n++] = i;
    }
  }
  const campaign_backend *b =
      strcmp(a->backend, "slurm") == 0 ? &campaign_slurm_backend : &campaign_local_backend;
  fprintf(stderr, "[campaign] %s: %d runs, %d to run (%s)%s, in %s\n", c->name, c->nruns, n,
          b->name, done ? ", the others done before" : "", c->out);
  campaign_progress p;
  campaign_progress_begin(&p, c->nruns, done);
  const int rc = n > 0 ? b->run(c, todo, n, &p, err, err_sz) : 0;
  campaign_progress_end(&p);
  free(todo);
  return rc;
}

int achilles_cmd_campaign(int argc, char **argv) {
  campaign_args a;
  const int parsed = parse_args(&a, argc, argv);
  if (parsed != 0) {
    return parsed > 0 ? CAMPAIGN_PASS : CAMPAIGN_WRONG;
  }
  char err[2048];
  campaign c;
  if (campaign_load(&c, a.spec, a.out, err, sizeof err) != 0) {
    fprintf(stderr, "achilles campaign: %s\n", err);
    return CAMPAIGN_WRONG;
  }
  if (a.workers > 0) {
    c.workers = a.workers;
  }
  if (a.chunk > 0) {
    c.slurm.chunk = a.chunk;
  }
  cli_on_stop_signals(on_signal);
  int status = CAMPAIGN_PASS;
  if (campaign_prepare_runs(&c, a.task < 0 && !a.gather, err, sizeof err) != 0) {
    fprintf(stderr, "achilles campaign: %s\n", err);
    status = CAMPAIGN_WRONG;
  } else if (a.task >= 0) {
    status = campaign_slurm_task(&c, a.task);
  } else {
    const int rc = a.gather ? 0 : run_all(&c, &a, err, sizeof err);
    int failed = 0;
    if (rc < 0) {
      fprintf(stderr, "achilles campaign: %s\n", err);
      status = CAMPAIGN_WRONG;
    } else if (campaign_gather(&c, &failed, err, sizeof err) != 0 ||
               (a.junit && campaign_junit(&c, a.junit, err, sizeof err) != 0)) {
      fprintf(stderr, "achilles campaign: %s\n", err);
      status = CAMPAIGN_FAIL;
    } else {
      status = rc == 130 ? CAMPAIGN_INTERRUPTED : failed ? CAMPAIGN_FAIL : CAMPAIGN_PASS;
    }
    if (rc == 130) {
      fprintf(stderr, "[campaign] interrupted: run again with --resume to go on\n");
    }
  }
  campaign_free(&c);
  return status;
}
