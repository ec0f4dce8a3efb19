/* tests/support/spawn.h: running programs (the `achilles` command, the example firmware, Python
 * helpers) as a user runs them, and reaping them.
 *
 * Exit statuses are as a shell reports them: the exit code, or 128 + the signal that ended the
 * process. A process is never left behind: ts_wait_exit kills what outlives its deadline. */
#ifndef ACHILLES_TESTS_SUPPORT_SPAWN_H
#define ACHILLES_TESTS_SUPPORT_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* Runs cmd with /bin/sh, its standard output (and whatever cmd sends there, e.g. "2>&1") into
 * out (at most out_sz - 1 bytes, NUL-terminated); returns the exit status, -1 when it could not
 * run. */
int ts_shell(const char *cmd, char *out, size_t out_sz);
/* The same with a printf-style command line. */
int ts_shellf(char *out, size_t out_sz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Starts argv (argv[0] a path) with standard input from in_path (NULL: /dev/null) and standard
 * output and error into the files out_path and err_path (NULL: this process's own); the pid. */
pid_t ts_spawn(char *const argv[], const char *in_path, const char *out_path,
               const char *err_path);
/* The same, with in_child(arg) run in the child just before exec (a resource limit, a signal
 * disposition). */
pid_t ts_spawn_with(char *const argv[], const char *in_path, const char *out_path,
                    const char *err_path, void (*in_child)(void *), void *arg);
/* The exit status of pid within seconds; a process still running then is killed (SIGKILL) and
 * the test fails naming it. */
int ts_wait_exit(pid_t pid, double seconds);
/* The exit status within seconds, or -1 after killing a process that did not exit: for a
 * process the test expects to end by itself but wants to judge. */
int ts_reap(pid_t pid, double seconds);
/* Sends sig, then reaps as ts_wait_exit. */
int ts_stop(pid_t pid, int sig, double seconds);

/* 1 when /usr/bin/python3 can import module (e.g. "zmq"), else 0. */
int ts_python_has(const char *module);

#endif
