/* sim/file_read.h: the one way Achilles opens a file it reads.
 *
 * Robot files (JSON, MJCF, URDF), sensors files, meshes, logs and CSV files all come through
 * here, so every reader refuses the same things with the same words: a named pipe (which would
 * block until a writer comes, or forever), a device (/dev/zero never ends), a directory or a
 * socket are "PATH: is a named pipe, not a regular file". The kind is checked before opening
 * and again on the opened descriptor (opened non-blocking), so a file swapped for a FIFO in
 * between cannot block either. Standard input is accepted only where a caller allows it and
 * only when named on purpose ("-", /dev/stdin, /dev/fd/N).
 */
#ifndef ACHILLES_SIM_FILE_READ_H
#define ACHILLES_SIM_FILE_READ_H

#include <stddef.h>
#include <stdio.h>

/* flags of sim_file_open and sim_file_read */
#define SIM_FILE_STDIN 1 /* also standard input named as such (robot and sensors files) */

/* Nonzero for the names of standard input: "-", /dev/stdin and /dev/fd/N (a shell's <(...)). */
int sim_file_is_stdin_name(const char *path);

/* Opens PATH for reading: a regular file of at most max_bytes (0: no limit), or standard input
 * named as such when flags has SIM_FILE_STDIN. NULL with "PATH: why" in err:
 *   PATH: cannot open: No such file or directory
 *   PATH: is a named pipe, not a regular file
 *   PATH: 4194305 bytes, more than the limit of 4194304 bytes
 * The caller closes the stream with sim_file_close. */
FILE *sim_file_open(const char *path, int flags, size_t max_bytes, char *err, size_t err_sz);
/* fclose, except for stdin (left open for a later reader); accepts NULL. */
void sim_file_close(FILE *f);

/* The whole of PATH (as sim_file_open) in a NUL-terminated buffer the caller frees, its length
 * in *size; standard input is read up to max_bytes too ("PATH: more than the limit of N
 * bytes"). NULL with a message. */
char *sim_file_read(const char *path, int flags, size_t max_bytes, size_t *size, char *err,
                    size_t err_sz);

#endif
