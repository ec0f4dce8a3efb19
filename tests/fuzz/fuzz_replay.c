/* tests/fuzz/fuzz_replay.c: a CSV file (or a log) as `achilles replay` and `noise-fit` import
 * it: the replay schedule, every sample of two passes encoded as its topic and JSON message,
 * and a series of one column. The input is written to a file because the loaders take a path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_support.h"
#include "hil/record/log.h"
#include "hil/record/replay.h"


static void play(const hil_replay_schedule *s) {
  static char topic[256], json[8192];
  for (long long pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < s->n; i++) {
      hil_replay_sample smp;
      hil_replay_sample_at(&smp, s, i, pass);
      const hil_replay_sensor *sn = &s->sensor[smp.sensor];
      hil_replay_topic(topic, sizeof topic, sn, 0);
      hil_replay_encode_json(json, sizeof json, sn, &smp, 0);
      if (smp.has_truth) {
        hil_replay_encode_json(json, sizeof json, sn, &smp, 1);
      }
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_input_file("replay.csv", data, size);
  if (!path) {
    return 0;
  }
  char err[512];
  static hil_replay_schedule s;
  hil_replay_select sel = {0};
  sel.skip_damaged = size > 0 && (data[size - 1] & 1);
  if (hil_replay_load(&s, path, &sel, err, sizeof err) == 0) {
    hil_replay_pass_length(&s);
    play(&s);
  }
  hil_replay_free(&s);
  hil_series series;
  if (hil_series_load(&series, path, "enc", "angle", err, sizeof err) == 0) {
    hil_series_free(&series);
  }
  return 0;
}
