/* sysid/series_load.c: a series from a file of either kind — an Achilles log (told by its
 * first bytes) or a CSV through its column map; the readers are series_log.c and series_csv.c. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "hil/record/log.h"
#include "sysid/series.h"

/* 1 when the file starts as a log record does: 8 hex digits of CRC, a space, a JSON object */
static int looks_like_log(const char *path, int *is_log, char *err, size_t err_sz) {
  FILE *f = hil_log_open_input(path, err, err_sz);
  if (!f) {
    return -1;
  }
  char head[10] = {0};
  const size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  *is_log = got == sizeof head && head[8] == ' ' && head[9] == '{';
  for (int i = 0; *is_log && i < 8; i++) {
    *is_log = isxdigit((unsigned char)head[i]) && !isupper((unsigned char)head[i]);
  }
  return 0;
}

int sysid_series_load(sysid_series *s, const char *path, const sim_model *m, const sens_set *set,
                      const char *map, char *err, size_t err_sz) {
  int is_log;
  memset(s, 0, sizeof *s);
  if (looks_like_log(path, &is_log, err, err_sz) != 0) {
    return -1;
  }
  if (!is_log) {
    return sysid_series_load_csv(s, path, m, map, err, err_sz);
  }
  if (map && map[0]) {
    snprintf(err, err_sz, "%s: an Achilles log names its own joints and actuators: --map is for "
             "CSV files", path);
    return -1;
  }
  return sysid_series_load_log(s, path, m, set, err, err_sz);
}
