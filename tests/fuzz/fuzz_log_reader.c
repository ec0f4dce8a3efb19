/* tests/fuzz/fuzz_log_reader.c: a recording (docs/logs.md) as `achilles replay` and `noise-fit`
 * read it: the record reader to the end, and a series of one channel. The input is written to
 * a file because the readers take a path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_support.h"
#include "hil/record/log.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("log.ndjson", data, size);
  if (!path) {
    return 0;
  }
  char err[512];
  hil_log_reader *r = hil_log_reader_open(path, err, sizeof err);
  static hil_log_record rec;
  for (int i = 0; r && i < 100000; i++) {
    const int rc = hil_log_next(r, &rec, err, sizeof err);
    if (rc == 0 || rc == HIL_LOG_ETRUNC || rc == HIL_LOG_EIO) {
      break;
    }
  }
  hil_log_reader_close(&r);
  hil_series s;
  if (hil_series_load(&s, path, "enc_shoulder", "angle", err, sizeof err) == 0) {
    hil_series_free(&s);
  }
  return 0;
}
