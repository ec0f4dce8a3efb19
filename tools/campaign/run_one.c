/* tools/campaign/run_one.c: one run of a campaign — `achilles test` on the run's scenario, in
 * the run's folder — the same command whichever backend starts it, and the result it leaves
 * when it could not leave its own (a crash, a hang past every limit, a scenario refused). */
#define _DEFAULT_SOURCE /* kill */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "hil/clock.h"

/* after its own time limit, `achilles test` ends a hung run; this much more and it is killed */
#define CAMPAIGN_KILL_MARGIN_S 30.0

double campaign_now(void) { return hil_monotonic_s(); }

int campaign_run_start(const campaign *c, int i, campaign_child *ch, char *err, size_t err_sz) {
  char dir[CAMPAIGN_PATH_MAX], scenario[CAMPAIGN_PATH_MAX], output[CAMPAIGN_PATH_MAX];
  campaign_run_path(c, i, NULL, dir, sizeof dir);
  campaign_run_path(c, i, "scenario.json", scenario, sizeof scenario);
  campaign_run_path(c, i, "output.txt", output, sizeof output);
  char result[CAMPAIGN_PATH_MAX];
  campaign_run_path(c, i, "result.json", result, sizeof result);
  unlink(result); /* what is there is from other inputs, or an interrupted run */
  char *argv[CAMPAIGN_MAX_ARGS + 12];
  int n = 0;
  argv[n++] = (char *)c->achilles;
  argv[n++] = "test";
  argv[n++] = scenario;
  argv[n++] = "--out";
  argv[n++] = dir;
  argv[n++] = "--id";
  argv[n++] = (char *)c->runs[i].id;
  argv[n++] = "--quiet";
  if (c->fw_argc > 0) {
    argv[n++] = "--";
    for (int k = 0; k < c->fw_argc; k++) {
      argv[n++] = c->fw_argv[k];
    }
  }
  argv[n] = NULL;
  const int out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    snprintf(err, err_sz, "%s: %s", output, strerror(errno));
    return -1;
  }
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, err_sz, "fork: %s", strerror(errno));
    close(out);
    return -1;
  }
  if (pid == 0) {
    dup2(out, 1);
    dup2(out, 2);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(argv[0], argv);
    _exit(127);
  }
  close(out);
  ch->pid = pid;
  ch->run = i;
  ch->started = campaign_now();
  ch->limit = ch->started + c->runs[i].time_limit_s + CAMPAIGN_KILL_MARGIN_S;
  return 0;
}

/* the last line of the run's output, for a result that says why it failed */
static void last_line(const char *path, char *out, size_t out_sz) {
  out[0] = '\0';
  FILE *f = fopen(path, "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0]) {
      snprintf(out, out_sz, "%s", line);
    }
  }
  if (f) {
    fclose(f);
  }
}

static int has_result(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    return 0;
  }
  char buf[65536];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, "\"verdict\"") != NULL;
}

int campaign_run_finish(const campaign *c, const campaign_child *ch, int status, int timed_out) {
  char result[CAMPAIGN_PATH_MAX], output[CAMPAIGN_PATH_MAX], why[1200], line[1024];
  campaign_run_path(c, ch->run, "result.json", result, sizeof result);
  campaign_run_path(c, ch->run, "output.txt", output, sizeof output);
  if (!timed_out && WIFEXITED(status) && has_result(result)) {
    return !(campaign_interrupted && WEXITSTATUS(status) != 0); /* an interrupted run is redone */
  }
  if (campaign_interrupted) {
    return 0;
  }
  last_line(output, line, sizeof line);
  if (timed_out) {
    snprintf(why, sizeof why, "killed after %.0f s: achilles test did not end",
             campaign_now() - ch->started);
  } else if (WIFSIGNALED(status)) {
    snprintf(why, sizeof why, "achilles test died of signal %d (%s)%s%s", WTERMSIG(status),
             strsignal(WTERMSIG(status)), line[0] ? ": " : "", line);
  } else {
    snprintf(why, sizeof why, "achilles test exited with %d and no result%s%s",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1, line[0] ? ": " : "", line);
  }
  campaign_run_fail(c, ch->run, why);
  return 1;
}

void campaign_run_fail(const campaign *c, int i, const char *why) {
  char result[CAMPAIGN_PATH_MAX], digest[24];
  campaign_run_path(c, i, "result.json", result, sizeof result);
  snprintf(digest, sizeof digest, "%016llx", (unsigned long long)c->runs[i].digest);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddNumberToObject(r, "v", 1);
  cJSON_AddStringToObject(r, "scenario", c->scenario_name[c->runs[i].scenario]);
  cJSON_AddStringToObject(r, "id", c->runs[i].id);
  cJSON_AddStringToObject(r, "verdict", "fail");
  cJSON_AddNumberToObject(r, "failed", 1);
  cJSON_AddItemToObject(r, "checks", cJSON_CreateArray());
  cJSON_AddStringToObject(r, "error", why);
  cJSON_AddStringToObject(r, "inputs_digest", digest);
  cJSON *files = cJSON_AddObjectToObject(r, "files");
  cJSON_AddStringToObject(files, "output", "output.txt");
  char *text = cJSON_Print(r);
  cJSON_Delete(r);
  FILE *f = text ? fopen(result, "w") : NULL;
  if (f) {
    fputs(text, f);
    fputc('\n', f);
    fclose(f);
  }
  free(text);
}

int campaign_run_wait(const campaign *c, int i, char *err, size_t err_sz) {
  campaign_child ch;
  if (campaign_run_start(c, i, &ch, err, err_sz) != 0) {
    return -1;
  }
  int status = 0, timed_out = 0;
  for (;;) {
    const pid_t got = waitpid(ch.pid, &status, WNOHANG);
    if (got == ch.pid) {
      break;
    }
    if (campaign_interrupted) {
      kill(ch.pid, SIGINT);
    } else if (campaign_now() > ch.limit) {
      kill(ch.pid, SIGKILL);
      timed_out = 1;
    }
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  return campaign_run_finish(c, &ch, status, timed_out);
}
