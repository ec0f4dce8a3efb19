/* sim/json_read.h: validated reading of JSON configuration (internal to the loaders).
 *
 * Every reader takes a context naming the source and the caller's error buffer, and the JSON
 * path of the object it reads from. On a problem it writes one message of the form
 * "SOURCE: PATH: what was expected (got what)" and returns -1; otherwise it returns 0.
 */
#ifndef ACHILLES_SIM_JSON_READ_H
#define ACHILLES_SIM_JSON_READ_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "sim/model.h"

#define SIM_JSON_PATH_MAX 160
#define SIM_JSON_UNIT_TOL 1e-6 /* how far from 1 the norm of an axis or quaternion may be */

typedef struct sim_json_ctx {
  const char *source; /* file name or other label for messages */
  char *err;
  size_t err_sz;
} sim_json_ctx;

/* Writes "SOURCE: PATH: message" into the context's buffer; always returns -1. */
int sim_json_fail(const sim_json_ctx *L, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sim_json_path_join(char out[SIM_JSON_PATH_MAX], const char *path, const char *key);
void sim_json_path_index(char out[SIM_JSON_PATH_MAX], const char *path, int index);

/* Every key of obj must be listed in the NULL-terminated `allowed`, so that typos are caught. */
int sim_json_check_keys(const sim_json_ctx *L, const cJSON *obj, const char *path,
                        const char *const *allowed);
int sim_json_expect_object(const sim_json_ctx *L, const cJSON *item, const char *path);

/* Finite numbers only. Absent optional keys leave *out unchanged. */
int sim_json_number_value(const sim_json_ctx *L, const cJSON *item, const char *path,
                          double *out);
int sim_json_read_number(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, double *out, int required);
int sim_json_array_values(const sim_json_ctx *L, const cJSON *item, const char *path,
                          double *out, int n);
int sim_json_read_vector(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, double *out, int n, int required);
/* A non-empty string shorter than out_sz at obj.key (absent: out unchanged). */
int sim_json_read_string(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, char *out, size_t out_sz);
/* An integer within [lo, hi] at obj.key (absent: out unchanged). */
int sim_json_read_int(const sim_json_ctx *L, const cJSON *obj, const char *path, const char *key,
                      int lo, int hi, int *out);
/* A non-empty string shorter than SIM_NAME_MAX. */
int sim_json_read_name(const sim_json_ctx *L, const cJSON *obj, const char *path,
                       const char *key, char out[SIM_NAME_MAX], int required);

/* value >= min (or > min when strict), reported at PATH.KEY. */
int sim_json_check_min(const sim_json_ctx *L, const char *path, const char *key, double value,
                       double min, int strict);
/* value <= max, reported at PATH.KEY. */
int sim_json_check_max(const sim_json_ctx *L, const char *path, const char *key, double value,
                       double max);

/* Bounds of physical inputs (docs/robot-format.md): finite is not enough, 1e308 kg overflows the
 * dynamics. Wide enough for any robot, from a gram-scale finger to a crane. */
#define SIM_JSON_MASS_MIN 1e-6      /* kg */
#define SIM_JSON_MASS_MAX 1e6       /* kg */
#define SIM_JSON_INERTIA_MAX 1e6    /* kg m^2, every element */
#define SIM_JSON_JOINT_COEF_MAX 1e6 /* damping, stiffness, armature (SI units) */
#define SIM_JSON_GRAVITY_MAX 1e3    /* m/s^2, every component */
#define SIM_JSON_TIMESTEP_MIN 1e-6  /* s */
#define SIM_JSON_TIMESTEP_MAX 1.0   /* s */

/* |v| = 1 within SIM_JSON_UNIT_TOL; then v is divided by its norm, so it is unit to round-off. */
int sim_json_normalize_unit(const sim_json_ctx *L, const char *path, const char *key, double *v,
                            int n);

/* 1-based line and column of `at` inside `text`, for parse errors. */
void sim_json_line_and_column(const char *text, const char *at, int *line, int *col);
/* Configuration files are at most this many bytes (docs/robot-format.md). */
#define SIM_JSON_FILE_MAX (4 * 1024 * 1024)

/* Nonzero for the names of standard input: "-", /dev/stdin and /dev/fd/N (a shell's <(...)). */
int sim_json_is_stdin_name(const char *path);
/* Reads a whole file into a NUL-terminated buffer the caller frees; NULL with a message. Only
 * regular files of at most SIM_JSON_FILE_MAX bytes, or standard input named as such; no NUL
 * bytes. The pinned file (below) is served from memory. */
char *sim_json_read_file(const char *path, char *err, size_t err_sz);
/* Reads PATH once and keeps its text, so that later reads of the same name (every loader of
 * `achilles run` reads the file) see the same bytes even from a pipe. One file at a time, for
 * the main thread of a command-line tool; sim_json_unpin frees it. */
int sim_json_pin_file(const char *path, char *err, size_t err_sz);
void sim_json_unpin(void);
/* Serves `size` bytes of text as the content of PATH (tests and fuzzing); -1 when out of memory. */
int sim_json_pin_text(const char *path, const char *text, size_t size);

/* Length of the longest valid UTF-8 prefix of s. */
size_t sim_json_utf8_valid_prefix(const char *s);
/* Every string and key under item is valid UTF-8; otherwise "SOURCE: PATH: ... not valid UTF-8". */
int sim_json_check_text(const sim_json_ctx *L, const cJSON *item, const char *path);
/* Parses JSON text (whitespace only after the value) and checks its strings with
 * sim_json_check_text; NULL with "SOURCE: line L, column C: invalid JSON" or that message. */
cJSON *sim_json_parse_text(const char *text, const char *source, char *err, size_t err_sz);
/* Reads and parses a JSON file with sim_json_parse_text. The caller frees the result with
 * cJSON_Delete. */
cJSON *sim_json_parse_file(const char *path, char *err, size_t err_sz);

/* Soft-constraint parameters at obj.key (absent: MuJoCo's defaults, a critically damped 20 ms
 * spring and impedance 0.9 -> 0.95 over 1 mm). solref: [timeconst > 0, dampratio > 0] or
 * [-stiffness <= 0, -damping <= 0]; solimp: [dmin, dmax, width, midpoint, power]. */
int sim_json_read_solref(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, double ref[SIM_NREF]);
int sim_json_read_solimp(const sim_json_ctx *L, const cJSON *obj, const char *path,
                         const char *key, double imp[SIM_NIMP]);

#endif
