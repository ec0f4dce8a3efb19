/* tests/sim/test_load_size.c: loading costs memory and work in proportion to the number of
 * bodies, in every format, and what is over the limits is refused before it costs much
 * (docs/robot-format.md, "Limits").
 *
 * Each load runs in a child process that reports its own peak resident memory and CPU time
 * (getrusage), so the figures are the load's alone. They are judged as memory per thousand
 * bodies between a model of 1 000 and one of 10 000 bodies (wide trees: each body's parent is
 * body (i - 1) / 8), and as CPU time, not wall time, with a bound many times what the load
 * takes here (measured about 0.3 s), which a loaded machine cannot reach. Before: 1 000 bodies
 * took 34 MB, 10 000 took 1.66 GB and 28 s (the dense n×n inertia matrix of the load-time
 * constants, name searches over every body), a chain of 1 000 bodies in JSON 70 s. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "sim/sim.h"
#include "support/sanitizer.h"
#include "support/skip.h"
#include "support/tmp.h"


/* AddressSanitizer's allocator (red zones, quarantine) makes a load's resident memory 2 to 7
 * times the plain build's (measured here: 29.9 against 4.3 MB per thousand JSON bodies, 95.9
 * against 54.0 MB for the refused URDF): the sanitizer build checks the memory bounds 8 times
 * wider, still far below what a quadratic load takes; the plain build checks them as written */
#define MEM_SCALE (TS_SANITIZED ? 8 : 1)

typedef enum format { JSON, MJCF, URDF } format;
static const char *const suffix[] = {"json", "xml", "urdf"};

/* --- robot files of n bodies ------------------------------------------------------------------ */

typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  if (t->s == NULL) { /* vsnprintf into NULL + 0 is undefined: start with a buffer */
    t->cap = 4096;
    t->s = malloc(t->cap);
    assert_non_null(t->s);
  }
  for (;;) {
    va_start(ap, fmt);
    const int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    if ((size_t)k < t->cap - t->n) {
      t->n += (size_t)k;
      return;
    }
    t->cap = 2 * t->cap + (size_t)k + 4096;
    t->s = realloc(t->s, t->cap);
    assert_non_null(t->s);
  }
}

static int parent_of(int i) { return (i - 1) / 8; } /* body i ≥ 1 hangs from this one (0: world) */

/* MJCF nests children inside their parents: body i's subtree, depth first */
static void mjcf_body(text *t, int i, int n) {
  put(t, "<body name=\"b%d\" pos=\"0.1 0 0\"><joint name=\"j%d\" axis=\"0 1 0\"/>"
         "<inertial pos=\"0 0 0.05\" mass=\"1\" diaginertia=\"0.01 0.01 0.01\"/>\n", i, i);
  for (int c = 8 * i + 1; c <= 8 * i + 8 && c <= n; c++) {
    mjcf_body(t, c, n);
  }
  put(t, "</body>\n");
}

/* bodies 1..n as a file of the format; its path */
static const char *write_robot(format f, int n, const char *name) {
  text t = {NULL, 0, 0};
  if (f == JSON) {
    put(&t, "{ \"name\": \"wide\", \"bodies\": [\n");
    for (int i = 1; i <= n; i++) {
      char parent[16] = "world";
      if (parent_of(i) > 0) {
        snprintf(parent, sizeof parent, "b%d", parent_of(i));
      }
      put(&t, "%s{\"name\":\"b%d\",\"parent\":\"%s\",\"pos\":[0.1,0,0],\"joint\":{\"name\":\"j%d\","
              "\"type\":\"hinge\",\"axis\":[0,1,0]},\"inertial\":{\"mass\":1,\"com\":[0,0,0.05],"
              "\"inertia\":[0.01,0.01,0.01,0,0,0]}}\n", i > 1 ? "," : "", i, parent, i);
    }
    put(&t, "] }\n");
  } else if (f == MJCF) {
    put(&t, "<mujoco model=\"wide\">\n<worldbody>\n");
    for (int r = 1; r <= 8 && r <= n; r++) {
      mjcf_body(&t, r, n);
    }
    put(&t, "</worldbody>\n</mujoco>\n");
  } else {
    put(&t, "<robot name=\"wide\">\n<link name=\"b0\"/>\n");
    for (int i = 1; i <= n; i++) {
      put(&t, "<link name=\"b%d\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" "
              "izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
              "<joint name=\"j%d\" type=\"continuous\"><parent link=\"b%d\"/><child link=\"b%d\"/>"
              "<origin xyz=\"0.1 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n", i, i, parent_of(i), i);
    }
    put(&t, "</robot>\n");
  }
  static char path[160];
  char file[64];
  snprintf(file, sizeof file, "%s.%s", name, suffix[f]);
  ts_tmp_path(path, sizeof path, file);
  ts_write_bytes(path, t.s, t.n);
  free(t.s);
  return path;
}

/* --- a load in a child process ------------------------------------------------------------- */

typedef struct cost {
  int loaded;     /* the model loaded (else err holds why) */
  long grown_kb;  /* peak resident memory grown during the load and a first evaluation */
  double cpu_s;   /* user and system time of that */
  int nbody;
  char err[400];
} cost;

static double cpu_of(const struct rusage *u) {
  return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) +
         1e-6 * (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec);
}

/* loads path (any format) and makes its data, as `achilles sim` does, in a child */
static cost load_cost(const char *path) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    cost c;
    memset(&c, 0, sizeof c);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    sim_model *m = sim_import_load_file(path, NULL, c.err, sizeof c.err);
    sim_data *d = m ? sim_data_new(m) : NULL;
    if (d) {
      sim_forward(m, d);
      c.loaded = 1;
      c.nbody = m->nbody;
    }
    getrusage(RUSAGE_SELF, &after);
    c.grown_kb = after.ru_maxrss - before.ru_maxrss;
    c.cpu_s = cpu_of(&after) - cpu_of(&before);
    const ssize_t w = write(fd[1], &c, sizeof c);
    _exit(w == (ssize_t)sizeof c ? 0 : 1);
  }
  close(fd[1]);
  cost c;
  memset(&c, 0, sizeof c);
  const ssize_t got = read(fd[0], &c, sizeof c);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  assert_true(got == (ssize_t)sizeof c && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return c;
}

/* 1 000 and 10 000 bodies: at most 12 MB per thousand bodies between them, at most 5 s of CPU */
static void linear_in(format f) {
  const cost small = load_cost(write_robot(f, 1000, "small"));
  const cost large = load_cost(write_robot(f, 10000, "large"));
  if (!small.loaded || !large.loaded) {
    fail_msg("%s: %s%s", suffix[f], small.err, large.err);
  }
  assert_int_equal(large.nbody, 10001);
  const double per_thousand = (double)(large.grown_kb - small.grown_kb) / 9 / 1024;
  print_message("%s: 1 000 bodies %.1f MB, %.3f s of CPU; 10 000 bodies %.1f MB, %.3f s: "
                "%.1f MB per thousand bodies\n", suffix[f], (double)small.grown_kb / 1024, small.cpu_s,
                (double)large.grown_kb / 1024, large.cpu_s, per_thousand);
  assert_true(per_thousand <= 12 * MEM_SCALE);
  assert_true(large.cpu_s <= 5);
}

TS_TEST(test_json_linear, linear_in(JSON))

TS_TEST(test_mjcf_linear, linear_in(MJCF))

TS_TEST(test_urdf_linear, linear_in(URDF))

/* --- refused early -------------------------------------------------------------------------- */

static void expect_refused(const char *path, const char *message, long max_kb) {
  const cost c = load_cost(path);
  print_message("%s\n  refused with %.1f MB, %.3f s of CPU\n", c.err, (double)c.grown_kb / 1024, c.cpu_s);
  if (c.loaded || !strstr(c.err, message)) {
    fail_msg("%s: expected a refusal with '%s', got '%s'", path, message, c.err);
  }
  assert_true(c.grown_kb <= max_kb * MEM_SCALE);
}

/* t written as name in the suite folder (and freed): the file's path, until the next call */
static const char *written(text *t, const char *name) {
  static char path[160];
  ts_tmp_path(path, sizeof path, name);
  ts_write_bytes(path, t->s, t->n);
  free(t->s);
  return path;
}

/* 100 000 links: a file of full links is over the size limit before it is parsed, one of bare
 * links (2 MB) at its 10 002nd link, before any is converted (it took 612 MB) */
static void test_urdf_of_100000_links(void **state) {
  (void)state;
  expect_refused(write_robot(URDF, 100000, "huge"), "more than the limit of 4194304 bytes",
                 16 * 1024);
  text t = {NULL, 0, 0};
  put(&t, "<robot name=\"bare\">\n");
  for (int i = 0; i <= 100000; i++) {
    put(&t, "<link name=\"l%d\"/>\n", i);
  }
  put(&t, "</robot>\n");
  expect_refused(written(&t, "bare.urdf"), "bare.urdf:10003: more than 10001 <link> elements", 64 * 1024);
}

/* 10 001 bodies; a chain too deep for the load-time constants (it loaded for minutes) */
static void test_json_limits(void **state) {
  (void)state;
  expect_refused(write_robot(JSON, 10001, "over"),
                 "bodies: 10001 bodies, more than the limit of 10000", 64 * 1024);
  text t = {NULL, 0, 0};
  put(&t, "{ \"bodies\": [\n");
  for (int i = 1; i <= 2000; i++) {
    char parent[16] = "world";
    if (i > 1) {
      snprintf(parent, sizeof parent, "b%d", i - 1);
    }
    put(&t, "%s{\"name\":\"b%d\",\"parent\":\"%s\",\"joint\":{\"name\":\"j%d\",\"type\":\"hinge\","
            "\"axis\":[0,1,0]},\"inertial\":{\"mass\":1,\"inertia\":[1,1,1,0,0,0]}}\n",
        i > 1 ? "," : "", i, parent, i);
  }
  put(&t, "] }\n");
  expect_refused(written(&t, "chain.json"), "bodies[1062]: the tree is too deep", 64 * 1024);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_json_linear, test_mjcf_linear, test_urdf_linear,
             test_urdf_of_100000_links, test_json_limits)
