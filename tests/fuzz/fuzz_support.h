/* tests/fuzz/fuzz_support.h: what the libFuzzer harnesses share. Header only, static inline:
 * each harness is one translation unit (some include the file they fuzz).
 *   fuzz_input_file  the input written to a file, for the readers that take a path
 *   fuzz_start       the club arm in lockstep with one transport, for the harnesses that drive
 *                    a transport (from LLVMFuzzerInitialize) */
#ifndef ACHILLES_TESTS_FUZZ_SUPPORT_H
#define ACHILLES_TESTS_FUZZ_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hil/runtime/runtime.h"

/* libFuzzer's entry points: once before the first input (fuzzing or replaying files), and per
 * input */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[96];

static inline void fuzz_remove_file(void) {
  unlink(fuzz_path);
}

/* data written to NAME (tmpfs when there is one: rewriting a file on ext4 flushes it at every
 * close, ~10 ms), removed at exit; the path, or NULL when it cannot be written */
static inline const char *fuzz_input_file(const char *name, const uint8_t *data, size_t size) {
  if (!fuzz_path[0]) {
    snprintf(fuzz_path, sizeof fuzz_path, "%s/achilles-fuzz-%d-%s",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(), name);
    atexit(fuzz_remove_file);
  }
  unlink(fuzz_path);
  FILE *f = fopen(fuzz_path, "wb");
  if (!f) {
    return NULL;
  }
  fwrite(data, 1, size, f);
  fclose(f);
  return fuzz_path;
}

/* the club arm in lockstep; NULL with the loader's message in err */
static inline hil_runtime *fuzz_runtime(char *err, size_t err_sz) {
  hil_options o;
  hil_options_default(&o);
  o.mode = HIL_MODE_LOCKSTEP;
  return hil_runtime_new(ACHILLES_SOURCE_DIR "/configs/club_arm.json", &o, err, err_sz);
}

static hil_runtime **fuzz_owned;

/* at exit: the transports close (socket files and pty links go away) */
static inline void fuzz_destroy(void) {
  hil_runtime_destroy(fuzz_owned);
}

/* *rt = the club arm in lockstep with the transport make() returns added to it, both destroyed
 * at exit; the transport. A harness that cannot set them up stops at once, saying why. */
static inline hil_transport *fuzz_start(hil_runtime **rt,
                                        hil_transport *(*make)(char *err, size_t err_sz),
                                        const char *harness) {
  char err[1024];
  *rt = fuzz_runtime(err, sizeof err);
  hil_transport *t = *rt ? make(err, sizeof err) : NULL;
  if (!t || hil_runtime_add_transport(*rt, t) != HIL_OK) {
    fprintf(stderr, "%s: %s\n", harness, err);
    abort();
  }
  fuzz_owned = rt;
  atexit(fuzz_destroy);
  return t;
}

/* The LLVMFuzzerInitialize of a harness that drives a transport: fuzz_start into rt, the
 * transport into transport (the harness's pointer to the transport's own struct). */
#define FUZZ_INITIALIZE_TRANSPORT(rt, transport, make, harness)                                   \
  int LLVMFuzzerInitialize(int *argc, char ***argv) {                                              \
    (void)argc;                                                                                    \
    (void)argv;                                                                                    \
    transport = (void *)fuzz_start(&rt, make, harness);                                            \
    return 0;                                                                                      \
  }

#endif
