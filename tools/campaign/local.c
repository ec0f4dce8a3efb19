/* tools/campaign/local.c: the local backend, a pool of `achilles test` processes (as many at once
 * as there are cores (or `workers`), each run killed if it outlives its own limit; Ctrl-C ends
 * the running ones (they stop at their next tick and leave an interrupted result) and starts no
 * more. */
#define _DEFAULT_SOURCE /* kill */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"

static int workers_of(const campaign *c) {
  if (c->workers > 0) {
    return c->workers;
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)cores : 1;
}

/* the slot of a child that ended (reaped), or -1 */
static int reap(campaign_child *slots, int nslots, int *status) {
  const pid_t pid = waitpid(-1, status, WNOHANG);
  for (int k = 0; pid > 0 && k < nslots; k++) {
    if (slots[k].pid == pid) {
      return k;
    }
  }
  return -1;
}

static int local_run(campaign *c, const int *todo, int n, campaign_progress *p, char *err,
                     size_t err_sz) {
  const int nslots = workers_of(c) < n ? workers_of(c) : n;
  campaign_child *slots = calloc((size_t)(nslots > 0 ? nslots : 1), sizeof *slots);
  if (!slots) {
    snprintf(err, err_sz, "out of memory");
    return -1;
  }
  int next = 0, running = 0, done = p->done, rc = 0, told = 0;
  while (next < n || running > 0) {
    for (int k = 0; k < nslots && next < n && !campaign_interrupted && rc == 0; k++) {
      if (slots[k].pid == 0) { /* a free slot: the next run */
        if (campaign_run_start(c, todo[next], &slots[k], err, err_sz) != 0) {
          rc = -1;
          break;
        }
        next++, running++;
      }
    }
    if (campaign_interrupted && !told) { /* the terminal sent them SIGINT too; kill(1) did not */
      told = 1;
      for (int k = 0; k < nslots; k++) {
        if (slots[k].pid > 0) {
          kill(slots[k].pid, SIGINT);
        }
      }
    }
    if ((rc != 0 || campaign_interrupted) && running == 0) {
      break;
    }
    int status = 0;
    const int k = reap(slots, nslots, &status);
    if (k >= 0) {
      const int counted = campaign_run_finish(c, &slots[k], status, 0);
      done += counted;
      p->failed += counted && !campaign_run_passed(c, slots[k].run);
      slots[k].pid = 0, running--;
      campaign_progress_step(p, done, 1);
      continue;
    }
    const double now = campaign_now();
    for (int s = 0; s < nslots; s++) { /* a run past every limit: killed, its result says so */
      if (slots[s].pid > 0 && now > slots[s].limit) {
        kill(slots[s].pid, SIGKILL);
        int st;
        waitpid(slots[s].pid, &st, 0);
        done += campaign_run_finish(c, &slots[s], st, 1);
        slots[s].pid = 0, running--;
      }
    }
    campaign_progress_step(p, done, 0);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  free(slots);
  return rc != 0 ? -1 : campaign_interrupted ? 130 : 0;
}

const campaign_backend campaign_local_backend = {"local", local_run};
