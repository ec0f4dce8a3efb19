/* tests/fuzz/fuzz_support.h: what the libFuzzer harnesses share. Header only, static inline:
 * each harness is one translation unit (some include the file they fuzz).
 *   fuzz_input_file  the input written to a file, for the readers that take a path
 *   fuzz_runtime     the club arm in lockstep, for the harnesses that drive a transport */
#ifndef ACHILLES_TESTS_FUZZ_SUPPORT_H
#define ACHILLES_TESTS_FUZZ_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hil/runtime/runtime.h"

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

/* t added to rt; a harness that cannot set up its transport stops at once, saying why */
static inline void fuzz_add_transport(hil_runtime *rt, hil_transport *t, const char *harness,
                                      const char *err) {
  if (!t || hil_runtime_add_transport(rt, t) != HIL_OK) {
    fprintf(stderr, "%s: %s\n", harness, err);
    abort();
  }
}

#endif
