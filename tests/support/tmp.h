/* tests/support/tmp.h: temporary folders and files for tests.
 *
 * Every folder is new (mkdtemp under /tmp, or /dev/shm where asked), so tests of several
 * sessions never meet. Functions that cannot do their job fail the running test (cmocka's
 * fail_msg), so a test reads as what it checks.
 *
 * The suite folder: a group fixture (ts_tmp_setup / ts_tmp_teardown, passed to cmocka's
 * group runner or called from a suite's own fixture) makes one folder for the whole suite;
 * ts_tmp_path() names a file in it. */
#ifndef ACHILLES_TESTS_SUPPORT_TMP_H
#define ACHILLES_TESTS_SUPPORT_TMP_H

#include <stddef.h>

/* A new folder "/tmp/achilles-TAG-XXXXXX" (TAG: what the test is about) written into out. */
void ts_tmpdir(char *out, size_t out_sz, const char *tag);
/* The same under /dev/shm when it is writable (no disk writeback beside a timed test). */
void ts_tmpdir_shm(char *out, size_t out_sz, const char *tag);
/* Removes path and everything below it (symbolic links are removed, never followed).
 * 0, or -1 when something could not be removed. */
int ts_rmtree(const char *path);

/* The suite folder: made by ts_tmp_setup (named after the test program), removed with all it
 * holds by ts_tmp_teardown; both have cmocka's fixture signature and return 0 or -1. */
int ts_tmp_setup(void **state);
int ts_tmp_teardown(void **state);
/* The same under /dev/shm where it is writable (a timed test: no disk writeback beside it). */
int ts_tmp_setup_shm(void **state);
const char *ts_tmp_dir(void);
/* out = the suite folder / name. */
void ts_tmp_path(char *out, size_t out_sz, const char *name);
/* out = "ipc://" the suite folder / name: a ZeroMQ endpoint of the suite's own. */
void ts_tmp_ipc(char *out, size_t out_sz, const char *name);
/* out = dir / name; fails the test when it does not fit. */
void ts_path(char *out, size_t out_sz, const char *dir, const char *name);

/* Writes text (or n bytes) into path, replacing what was there. */
void ts_write_file(const char *path, const char *text);
void ts_write_bytes(const char *path, const void *data, size_t n);
/* Writes text into a new file made from tmpl ("/tmp/name_XXXXXX", changed in place: the name
 * made). The caller removes it. */
void ts_write_temp(char *tmpl, const char *text);

/* The whole file, NUL-terminated, in memory the caller frees; *n (when not NULL) its length.
 * NULL when it cannot be read. */
char *ts_read_file(const char *path, size_t *n);
/* The file's text (at most 1 MiB; "" when it cannot be read) in a buffer the next call
 * overwrites (the caller may change it): for reading one output at a time. */
char *ts_slurp(const char *path);

/* Lines of text (its '\n' characters), and of a file (fails the test when it cannot be read). */
int ts_count_lines(const char *text);
int ts_file_lines(const char *path);
/* The byte offset at which line `line` (from 1) of a file starts; its size when it has fewer. */
long ts_line_offset(const char *path, int line);

#endif
