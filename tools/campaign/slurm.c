/* tools/campaign/slurm.c: the Slurm backend — the runs in chunks, one array task per chunk
 * (`sbatch --array`), each task this same binary running its chunk's runs one after the other
 * on the shared folder; the tasks' states and exit codes from `scontrol -o show job` (no
 * accounting database needed), a marker file per task as the fallback once Slurm has forgotten
 * the job; failed tasks submitted once more; Ctrl-C cancels the job.
 *
 * The folder OUT and this binary must be visible at the same paths on every node (a shared
 * file system): a task writes its runs' results where the submitter reads them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"

#define MAX_TASKS 100000
#define POLL_S 0.3

/* --- running the Slurm commands --------------------------------------------------------------- */

/* argv's standard output (and error) into out; its exit status, -1 when it cannot start */
static int capture(char *const argv[], char *out, size_t out_sz) {
  int fd[2];
  if (pipe(fd) != 0) {
    return -1;
  }
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t got;
  while ((got = read(fd[0], out + n, out_sz - 1 - n)) > 0 && n + (size_t)got < out_sz - 1) {
    n += (size_t)got;
  }
  if (got > 0) {
    n += (size_t)got;
  }
  out[n] = '\0';
  char sink[4096];
  while (read(fd[0], sink, sizeof sink) > 0) { /* the rest, so that it never blocks */
  }
  close(fd[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* --- chunks and the job script ---------------------------------------------------------------- */

typedef struct task {
  int first, count;  /* runs todo[first .. first + count) */
  int state;         /* 0 unknown/pending/running, 1 completed, 2 failed */
  int attempts;
  int seen;          /* listed by the last scontrol */
  int missing;       /* polls in a row that did not list it (cancelled while pending) */
  char why[96];      /* the state and exit code Slurm gave */
} task;

static void slurm_path(const campaign *c, char *out, size_t out_sz, const char *fmt, int k) {
  char name[64];
  snprintf(name, sizeof name, fmt, k);
  snprintf(out, out_sz, "%s/slurm/%s", c->out, name);
}

static int write_chunks(const campaign *c, const int *todo, task *tasks, int ntasks, char *err,
                        size_t err_sz) {
  for (int k = 0; k < ntasks; k++) {
    char path[CAMPAIGN_PATH_MAX];
    slurm_path(c, path, sizeof path, "chunk-%d.txt", k);
    FILE *f = fopen(path, "w");
    for (int i = 0; f && i < tasks[k].count; i++) {
      fprintf(f, "%s\n", c->runs[todo[tasks[k].first + i]].id);
    }
    if (!f || fclose(f) != 0) {
      snprintf(err, err_sz, "%s: %s", path, strerror(errno));
      return -1;
    }
    slurm_path(c, path, sizeof path, "done-%d", k);
    unlink(path);
  }
  return 0;
}

static int write_script(const campaign *c, char *path, size_t path_sz, char *err, size_t err_sz) {
  char spec[CAMPAIGN_PATH_MAX], cwd[CAMPAIGN_PATH_MAX];
  if (c->spec[0] == '/' || !getcwd(cwd, sizeof cwd)) {
    snprintf(spec, sizeof spec, "%s", c->spec);
  } else {
    snprintf(spec, sizeof spec, "%s/%s", cwd, c->spec);
  }
  snprintf(path, path_sz, "%s/slurm/job.sh", c->out);
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, err_sz, "%s: %s", path, strerror(errno));
    return -1;
  }
  /* the paths are this program's own and the campaign's: no quote in them is expected, and one
   * would only break this script, which says so */
  fprintf(f, "#!/bin/sh\n"
             "# Written by achilles campaign %s: array task N runs the runs listed in\n"
             "# slurm/chunk-N.txt (docs/testing-firmware.md, \"Campaigns on Slurm\").\n"
             "exec '%s' campaign '%s' --out '%s' --slurm-task \"$SLURM_ARRAY_TASK_ID\"\n",
          c->name, c->achilles, spec, c->out);
  return fclose(f) == 0 ? 0 : -1;
}

/* sbatch --parsable --array=LIST ...; the job id, or -1 with its output in err */
static long submit(const campaign *c, const char *array, const char *script, char *err,
                   size_t err_sz) {
  char arr[64 + 4096], name[160], output[CAMPAIGN_PATH_MAX + 32], out[4096];
  snprintf(arr, sizeof arr, "--array=%s", array);
  snprintf(name, sizeof name, "--job-name=achilles-%s", c->name);
  snprintf(output, sizeof output, "--output=%s/slurm/task-%%A_%%a.out", c->out);
  char partition[96], time[64];
  char *argv[40];
  int n = 0;
  argv[n++] = "sbatch";
  argv[n++] = "--parsable";
  argv[n++] = arr;
  argv[n++] = name;
  argv[n++] = output;
  if (c->slurm.partition[0]) {
    snprintf(partition, sizeof partition, "--partition=%s", c->slurm.partition);
    argv[n++] = partition;
  }
  if (c->slurm.time[0]) {
    snprintf(time, sizeof time, "--time=%s", c->slurm.time);
    argv[n++] = time;
  }
  for (int i = 0; i < c->slurm.nextra; i++) {
    argv[n++] = c->slurm.extra[i];
  }
  argv[n++] = (char *)script;
  argv[n] = NULL;
  const int rc = capture(argv, out, sizeof out);
  char *end = NULL;
  const long id = strtol(out, &end, 10);
  if (rc != 0 || end == out || id <= 0) {
    out[strcspn(out, "\n")] = '\0';
    snprintf(err, err_sz, "sbatch %s: %s", rc == 127 ? "not found (is slurm-client installed?)"
             : "failed", out[0] ? out : "(no output)");
    return -1;
  }
  return id;
}

/* --- the tasks' states ------------------------------------------------------------------------ */

/* "3", "3-9", "3-9%2", "1,4,7-9": marks each task id listed as seen, and sets the state of
 * those still open when state is not 0 */
static void set_range(const char *list, task *tasks, int ntasks, int state, const char *why) {
  for (const char *p = list; *p && *p != ' ';) {
    char *end;
    const long a = strtol(p, &end, 10);
    long b = a;
    if (end == p) {
      return;
    }
    if (*end == '-') {
      b = strtol(end + 1, &end, 10);
    }
    for (long k = a; k <= b && k < ntasks; k++) {
      if (k < 0) {
        continue;
      }
      tasks[k].seen = 1;
      if (tasks[k].state == 0 && state != 0) {
        tasks[k].state = state;
        snprintf(tasks[k].why, sizeof tasks[k].why, "%s", why);
      }
    }
    while (*end && *end != ',' && *end != ' ') {
      end++; /* a %throttle */
    }
    p = *end == ',' ? end + 1 : end;
  }
}

static const char *field(const char *line, const char *key, char *out, size_t out_sz) {
  const char *at = strstr(line, key);
  out[0] = '\0';
  if (at) {
    at += strlen(key);
    snprintf(out, out_sz, "%.*s", (int)strcspn(at, " \n"), at);
  }
  return out;
}

/* Reads the job's tasks from scontrol (one line per task, or per group of pending ones). A task
 * cancelled while pending leaves the list: missing twice in a row, it failed. Returns 0, or -1
 * when Slurm no longer knows the job. */
static int read_states(long job, task *tasks, int ntasks) {
  char id[32], out[1 << 16];
  snprintf(id, sizeof id, "%ld", job);
  char *argv[] = {"scontrol", "-o", "show", "job", id, NULL};
  if (capture(argv, out, sizeof out) != 0) {
    return -1;
  }
  for (char *line = out; *line;) {
    char *next = strchr(line, '\n');
    if (next) {
      *next = '\0';
    }
    char tid[4096], state[32], code[32], why[96];
    field(line, "ArrayTaskId=", tid, sizeof tid);
    field(line, "JobState=", state, sizeof state);
    field(line, "ExitCode=", code, sizeof code);
    const int terminal = strcmp(state, "COMPLETED") == 0 || strcmp(state, "FAILED") == 0 ||
                         strcmp(state, "CANCELLED") == 0 || strcmp(state, "TIMEOUT") == 0 ||
                         strcmp(state, "NODE_FAIL") == 0 || strcmp(state, "OUT_OF_MEMORY") == 0 ||
                         strcmp(state, "PREEMPTED") == 0 || strcmp(state, "BOOT_FAIL") == 0 ||
                         strcmp(state, "DEADLINE") == 0;
    snprintf(why, sizeof why, "%s, exit code %s", state, code);
    if (tid[0]) {
      set_range(tid, tasks, ntasks,
                !terminal ? 0
                : strcmp(state, "COMPLETED") == 0 && strcmp(code, "0:0") == 0 ? 1 : 2, why);
    }
    line = next ? next + 1 : line + strlen(line);
  }
  return 0;
}

/* after a poll that listed the job: tasks it did not list were cancelled before they ran */
static void missing_tasks(task *tasks, int ntasks) {
  for (int k = 0; k < ntasks; k++) {
    tasks[k].missing = tasks[k].seen ? 0 : tasks[k].missing + 1;
    if (tasks[k].state == 0 && tasks[k].missing >= 2) {
      tasks[k].state = 2;
      snprintf(tasks[k].why, sizeof tasks[k].why, "CANCELLED before it ran");
    }
    tasks[k].seen = 0;
  }
}

/* Slurm forgot the job (MinJobAge): the tasks' own markers say how they ended */
static void read_markers(const campaign *c, task *tasks, int ntasks) {
  for (int k = 0; k < ntasks; k++) {
    char path[CAMPAIGN_PATH_MAX];
    slurm_path(c, path, sizeof path, "done-%d", k);
    FILE *f = tasks[k].state == 0 ? fopen(path, "r") : NULL;
    int code = -1;
    if (f) {
      if (fscanf(f, "%d", &code) != 1) {
        code = -1;
      }
      fclose(f);
    }
    if (tasks[k].state == 0) {
      tasks[k].state = code == 0 ? 1 : 2;
      snprintf(tasks[k].why, sizeof tasks[k].why, "%s",
               code == 0 ? "COMPLETED (marker)"
               : f       ? "failed (marker)"
                         : "gone from Slurm, no marker");
    }
  }
}

/* runs of todo with a result now (and, of those, how many failed) */
static int count_done(const campaign *c, const int *todo, int n, int *failed) {
  int done = 0;
  *failed = 0;
  for (int i = 0; i < n; i++) {
    if (campaign_run_done(c, todo[i])) {
      done++;
      *failed += !campaign_run_passed(c, todo[i]);
    }
  }
  return done;
}

/* waits until every task of the job listed in `which` ended (or an interrupt: scancel) */
static int wait_job(const campaign *c, long job, task *tasks, int ntasks, const int *todo, int n,
                    campaign_progress *p) {
  int failed;
  const int base = p->done - count_done(c, todo, n, &failed), base_failed = p->failed - failed;
  for (;;) {
    if (campaign_interrupted) {
      char id[32];
      snprintf(id, sizeof id, "%ld", job);
      char *argv[] = {"scancel", id, NULL}, out[1024];
      capture(argv, out, sizeof out);
      return 130;
    }
    if (read_states(job, tasks, ntasks) != 0) {
      read_markers(c, tasks, ntasks);
    } else {
      missing_tasks(tasks, ntasks);
    }
    int pending = 0;
    for (int k = 0; k < ntasks; k++) {
      pending += tasks[k].state == 0;
    }
    const int done = count_done(c, todo, n, &failed);
    p->failed = base_failed + failed;
    campaign_progress_step(p, base + done, 0);
    if (pending == 0) {
      return 0;
    }
    sleep_s(POLL_S);
  }
}

static int slurm_run(campaign *c, const int *todo, int n, campaign_progress *p, char *err,
                     size_t err_sz) {
  const int chunk = c->slurm.chunk > 0 ? c->slurm.chunk : 10;
  const int ntasks = (n + chunk - 1) / chunk;
  if (ntasks > MAX_TASKS) {
    snprintf(err, err_sz, "%d array tasks: more than %d (raise slurm.chunk)", ntasks, MAX_TASKS);
    return -1;
  }
  task *tasks = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *tasks);
  char dir[CAMPAIGN_PATH_MAX], script[CAMPAIGN_PATH_MAX];
  snprintf(dir, sizeof dir, "%s/slurm", c->out);
  if (!tasks || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
    snprintf(err, err_sz, "%s: %s", dir, strerror(errno));
    free(tasks);
    return -1;
  }
  for (int k = 0; k < ntasks; k++) {
    tasks[k].first = k * chunk;
    tasks[k].count = n - k * chunk < chunk ? n - k * chunk : chunk;
  }
  int rc = write_chunks(c, todo, tasks, ntasks, err, err_sz) ||
           write_script(c, script, sizeof script, err, err_sz) ? -1 : 0;
  for (int attempt = 0; rc == 0 && attempt < 2; attempt++) {
    char array[4096] = ""; /* every task the first time; the failed ones the second */
    for (int k = 0; k < ntasks; k++) {
      if (attempt == 0 || tasks[k].state == 2) {
        if (attempt == 1) {
          char marker[CAMPAIGN_PATH_MAX];
          slurm_path(c, marker, sizeof marker, "done-%d", k);
          unlink(marker); /* the first attempt's */
          snprintf(array + strlen(array), sizeof array - strlen(array), "%s%d",
                   array[0] ? "," : "", k);
        }
        tasks[k].state = 0, tasks[k].attempts++;
      }
    }
    if (attempt == 0) {
      snprintf(array, sizeof array, "0-%d", ntasks - 1);
    }
    if (!array[0]) {
      break;
    }
    if (attempt == 1) {
      fprintf(stderr, "\n[campaign] Slurm: tasks %s failed; submitting them once more\n", array);
    }
    const long job = submit(c, array, script, err, err_sz);
    if (job < 0) {
      rc = -1;
      break;
    }
    char jobs[CAMPAIGN_PATH_MAX]; /* for people (and tests) who want to look at the job */
    snprintf(jobs, sizeof jobs, "%s/slurm/jobs.txt", c->out);
    FILE *jf = fopen(jobs, attempt == 0 ? "w" : "a");
    if (jf) {
      fprintf(jf, "%ld %s\n", job, array);
      fclose(jf);
    }
    rc = wait_job(c, job, tasks, ntasks, todo, n, p);
  }
  for (int k = 0; rc == 0 && k < ntasks; k++) { /* failed twice: their runs fail, saying so */
    for (int i = 0; tasks[k].state == 2 && i < tasks[k].count; i++) {
      const int run = todo[tasks[k].first + i];
      if (!campaign_run_done(c, run)) {
        char why[256];
        snprintf(why, sizeof why, "Slurm array task %d ended %s, twice", k, tasks[k].why);
        campaign_run_fail(c, run, why);
      }
    }
  }
  free(tasks);
  return rc;
}

const campaign_backend campaign_slurm_backend = {"slurm", slurm_run};

/* --- inside an array task ------------------------------------------------------------------- */

int campaign_slurm_task(campaign *c, int k) {
  char path[CAMPAIGN_PATH_MAX], id[300], err[1024];
  slurm_path(c, path, sizeof path, "chunk-%d.txt", k);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "achilles campaign: task %d: %s: %s\n", k, path, strerror(errno));
    return 1;
  }
  int status = 0;
  while (!campaign_interrupted && fgets(id, sizeof id, f)) {
    id[strcspn(id, "\n")] = '\0';
    const int run = campaign_find_run(c, id);
    if (run < 0) {
      fprintf(stderr, "achilles campaign: task %d: no run %s in %s\n", k, id, c->spec);
      status = 1;
      continue;
    }
    if (!campaign_run_done(c, run) && campaign_run_wait(c, run, err, sizeof err) < 0) {
      fprintf(stderr, "achilles campaign: task %d: %s: %s\n", k, id, err);
      status = 1;
    }
  }
  fclose(f);
  status |= campaign_interrupted != 0;
  slurm_path(c, path, sizeof path, "done-%d", k);
  FILE *m = fopen(path, "w");
  if (m) {
    fprintf(m, "%d\n", status);
    fclose(m);
  }
  return status;
}
