/* tools/cli/cli.c: argument helpers shared by the achilles subcommands. */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_double(const char *option, const char *text, double *out, char *err,
                     size_t err_sz) {
  char *end = NULL;
  errno = 0;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value)) {
    snprintf(err, err_sz, "%s: expected a finite number, got '%s'", option, text);
    return -1;
  }
  *out = value;
  return 0;
}

int cli_number_at_least(const char *program, const char *option, const char *text, double min,
                        double *out) {
  char err[256];
  if (cli_parse_double(option, text, out, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
  }
  if (*out < min) {
    fprintf(stderr, "%s: %s: must be >= %g (got %s)\n", program, option, min, text);
    return -1;
  }
  return 0;
}

void cli_on_stop_signals(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);  /* the terminal closed: stop as cleanly as on Ctrl-C */
  sigaction(SIGQUIT, &sa, NULL); /* Ctrl-\: the same, rather than a core dump */
  signal(SIGPIPE, SIG_IGN);      /* a closed socket or pipe is an error value, not a death */
  signal(SIGXFSZ, SIG_IGN);      /* a file size limit is a write error (EFBIG) we report */
}

static void list_moving_joints(const sim_model *m, char *out, size_t out_sz) {
  out[0] = '\0';
  for (int j = 0; j < m->njnt; j++) {
    if (m->joints[j].dofadr >= 0) {
      size_t used = strlen(out);
      snprintf(out + used, out_sz - used, "%s%s", used ? ", " : "", m->joints[j].name);
    }
  }
}

int cli_parse_joint_value(const sim_model *m, const char *option, const char *text, int *joint,
                          double *value, char *err, size_t err_sz) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text) {
    snprintf(err, err_sz, "%s: expected JOINT=VALUE, got '%s'", option, text);
    return -1;
  }
  char name[SIM_NAME_MAX];
  size_t len = (size_t)(eq - text);
  if (len >= sizeof name) {
    len = sizeof name - 1;
  }
  memcpy(name, text, len);
  name[len] = '\0';
  int j = sim_model_joint(m, name);
  if (j < 0 || m->joints[j].dofadr < 0) {
    char names[512];
    list_moving_joints(m, names, sizeof names);
    snprintf(err, err_sz, "%s: unknown joint '%s' (joints: %s)", option, name, names);
    return -1;
  }
  if (sim_joint_nv(m->joints[j].type) != 1) {
    snprintf(err, err_sz, "%s: joint '%s' has several coordinates (only hinges and slides take "
                          "one value)", option, name);
    return -1;
  }
  *joint = j;
  return cli_parse_double(option, eq + 1, value, err, err_sz);
}

FILE *cli_open_output(const char *path, char *err, size_t err_sz) {
  if (strcmp(path, "-") == 0) {
    return stdout;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, err_sz, "%s: cannot open for writing: %s", path, strerror(errno));
  }
  return f;
}

/* 1 when s reads as the optional ADDRESS:PORT of --view (so `--view 0.0.0.0:8080` works as
 * well as `--view=0.0.0.0:8080`, and `--view CONFIG` still takes CONFIG as the config). */
static int looks_like_address(const char *s) {
  const char *colon = strrchr(s, ':');
  if (!colon || !colon[1] || s[0] == '-' || strchr(s, '/')) {
    return 0;
  }
  for (const char *p = colon + 1; *p; p++) {
    if (*p < '0' || *p > '9') {
      return 0;
    }
  }
  return 1;
}

/* argv with "--view ADDRESS:PORT" joined into "--view=ADDRESS:PORT" (getopt takes an optional
 * argument only after '='). The joined strings live in `joined`. */
char **cli_join_view_address(int *argc, char **argv, char *joined, size_t joined_sz) {
  char **out = calloc((size_t)*argc + 1, sizeof *out);
  if (!out) {
    return NULL;
  }
  int n = 0;
  for (int i = 0; i < *argc; i++) {
    if (strcmp(argv[i], "--view") == 0 && i + 1 < *argc && looks_like_address(argv[i + 1]) &&
        strlen(argv[i + 1]) + 8 < joined_sz) {
      snprintf(joined, joined_sz, "--view=%s", argv[i + 1]);
      out[n++] = joined;
      i++;
      continue;
    }
    out[n++] = argv[i];
  }
  *argc = n;
  return out;
}

int cli_view_host(const char *program, hil_view_options *o, const char *arg) {
  char err[256];
  if (hil_view_add_host(o, arg, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
  }
  return 0;
}

int cli_view_option(const char *program, int *view, hil_view_options *o, const char *arg) {
  char err[256];
  *view = 1;
  if (arg && hil_view_parse_address(o, arg, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
  }
  return 0;
}
