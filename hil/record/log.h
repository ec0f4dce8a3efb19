/* hil/record/log.h: the recording log (writer and reader) and the import of CSV logs.
 *
 * Format (docs/logs.md): one record per line, "cccccccc {json}\n", where cccccccc is the CRC-32
 * (IEEE 802.3, as zlib's crc32) of the JSON text in 8 lowercase hex digits. The first record is
 * a header; then samples, commands, servo and status records in the order they happened; a final
 * "end" record when the log was closed cleanly (its absence means the run was killed). Numbers
 * are written with the shortest digits that read back bit for bit (hil/number_format.h); NaN and
 * infinities are written as null.
 *
 * Crash safety: the writer appends to a fixed buffer and hands it to the kernel (write(2)) on
 * hil_log_flush(), when the buffer fills, and on close. A process killed with SIGKILL loses only
 * what was written since the last flush; the reader returns every complete record before a
 * truncated or corrupted one, and names the record (its line number) and byte offset of the
 * damage.
 *
 * Ownership: hil_log_open() allocates a writer, hil_log_close() writes the end record, releases
 * it and nulls the pointer. hil_log_reader_open() allocates a reader, hil_log_reader_close()
 * releases it. hil_series_load() allocates the arrays of a series, hil_series_free() releases
 * them. Writing a record never allocates.
 */
#ifndef ACHILLES_HIL_LOG_H
#define ACHILLES_HIL_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensors/sensors.h"
#include "sim/sim.h"

#define HIL_LOG_VERSION 2 /* 2: servo records; a version-1 log (none) still reads */
#define HIL_LOG_MAX_SENSORS 32
#define HIL_LOG_MAX_ACTUATORS 32
#define HIL_LOG_NAME_MAX 64
#define HIL_LOG_UNIT_MAX 16
#define HIL_LOG_LINE_MAX 8192      /* longest record the writer produces and the reader accepts */
#define HIL_LOG_BUFFER_BYTES 65536 /* writer buffer; flushed to the kernel when full */
#define HIL_LOG_MAX_REGISTERS 24   /* control-table fields in one servo record */
#define HIL_LOG_REGISTER_NAME_MAX 24

/* error codes of this module (0 = success) */
#define HIL_LOG_EIO (-1)       /* open, read or write failed */
#define HIL_LOG_EFORMAT (-2)   /* not an achilles log, or a record that does not parse */
#define HIL_LOG_ECRC (-3)      /* checksum mismatch */
#define HIL_LOG_ETRUNC (-4)    /* last line without '\n': the writer was killed mid-record */
#define HIL_LOG_EARG (-5)      /* bad argument (too many sensors, a name too long, ...) */
#define HIL_LOG_ENOTFOUND (-6) /* no such sensor or column */

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320, as zlib); crc32("123456789") =
 * 0xCBF43926. Pass crc = 0 to start; feed the result back to continue. */
uint32_t hil_crc32(uint32_t crc, const void *data, size_t n);

/* --- header ---------------------------------------------------------------------------------- */

typedef struct hil_log_sensor_info {
  char name[HIL_LOG_NAME_MAX];
  char type[16]; /* "encoder", "imu", "torque" */
  int nch;
  char channel[SENS_MAX_CHANNELS][SENS_CHANNEL_NAME_MAX];
  char unit[SENS_MAX_CHANNELS][HIL_LOG_UNIT_MAX];
  double rate_hz;
} hil_log_sensor_info;

typedef struct hil_log_header {
  int version;                      /* the file's: 1 or HIL_LOG_VERSION (the writer's) */
  char robot[HIL_LOG_NAME_MAX];
  double rate_hz;                   /* physics rate */
  uint64_t seed;                    /* noise seed of the sensor set */
  int nsensors;
  hil_log_sensor_info sensor[HIL_LOG_MAX_SENSORS];
  int nactuators;
  char actuator[HIL_LOG_MAX_ACTUATORS][HIL_LOG_NAME_MAX];
  char started[40];                 /* ISO-8601 UTC wall clock, "2026-11-29T21:51:18Z" */
} hil_log_header;

/* Fills a header from a model and its sensor set (set may be NULL), with the current wall
 * clock as "started". Returns 0, or HIL_LOG_EARG when there are more sensors or actuators than
 * the header holds. */
int hil_log_header_init(hil_log_header *h, const sim_model *m, const sens_set *set);

/* --- writer ---------------------------------------------------------------------------------- */

typedef struct hil_log_writer hil_log_writer;

/* Creates (truncates) path and writes the header record. NULL with a message on failure. */
hil_log_writer *hil_log_open(const char *path, const hil_log_header *h, char *err,
                             size_t err_sz);
/* One sensor sample: measured values (null when not valid) and truth. wall: monotonic s since
 * the start of the run. Returns 0 or a negative code (the first write error sticks). */
int hil_log_write_sample(hil_log_writer *w, const sens_sensor *s, const sens_sample *smp,
                         double wall);
/* One command received. source: "zmq", "serial", "api" (submitted in-process: a servo bus's
 * torques) or "watchdog" (the watchdog set it to 0); result: "ok", "clamped" or
 * "rejected:<reason>". */
int hil_log_write_command(hil_log_writer *w, double t, double wall, const char *source,
                          const char *actuator, double value, const char *result);
/* A status record: status_json is a JSON object (e.g. the status message of docs/messages.md)
 * on one line; it is stored under the key "status". */
int hil_log_write_status(hil_log_writer *w, double t, double wall, const char *status_json);
/* A servo record: the control-table fields (names as hil/servo/servo_watch.h, values the fields'
 * bytes as unsigned little-endian integers) that servo `actuator` (bus ID id) took at physics
 * step `step` (simulation time t): the loop that ran at that step's state used them for the torque
 * of the step from it. HIL_LOG_EARG for more than HIL_LOG_MAX_REGISTERS fields or a name too long
 * for the reader. */
int hil_log_write_servo(hil_log_writer *w, double t, uint64_t step, double wall,
                        const char *actuator, int id, int n, const char *const *names,
                        const uint32_t *values);
/* Hands the buffer to the kernel (write(2); no fsync). Call every ~0.1 s of wall time. */
int hil_log_flush(hil_log_writer *w);
/* Writes the end record, flushes, fsyncs, closes, frees and sets *w to NULL; accepts NULL.
 * Returns the first error met by this writer, or 0; after an error errno holds the reason
 * (as hil_log_sys_errno would have). */
int hil_log_close(hil_log_writer **w);
/* Records written so far (header included) and the first error (0 if none). */
long long hil_log_records(const hil_log_writer *w);
int hil_log_error(const hil_log_writer *w);
/* errno of the write, fsync or close that failed first (ENOSPC, EFBIG, EIO...); 0 when none
 * failed or the first error was not a system call's (HIL_LOG_EARG: a record too long). */
int hil_log_sys_errno(const hil_log_writer *w);

/* --- reader ---------------------------------------------------------------------------------- */

typedef enum hil_log_rtype {
  HIL_LOG_HEADER = 0,
  HIL_LOG_SAMPLE = 1,
  HIL_LOG_COMMAND = 2,
  HIL_LOG_STATUS = 3,
  HIL_LOG_END = 4,
  HIL_LOG_SERVO = 5, /* version 2 */
} hil_log_rtype;

typedef struct hil_log_record {
  hil_log_rtype type;
  long long index;   /* record number = line number, 1-based (the header is record 1) */
  long long offset;  /* byte offset of the line's first byte */
  double t, wall;    /* simulation time and wall time (NaN when absent: header) */
  /* sample */
  char sensor[HIL_LOG_NAME_MAX];
  char topic[HIL_LOG_NAME_MAX + 16];
  uint64_t seq;
  double t_truth;
  int valid;
  int nch;
  char channel[SENS_MAX_CHANNELS][SENS_CHANNEL_NAME_MAX];
  double value[SENS_MAX_CHANNELS];  /* NaN for null */
  double truth[SENS_MAX_CHANNELS];  /* NaN when the record has no truth for the channel */
  /* command */
  char source[16];
  char actuator[HIL_LOG_NAME_MAX];
  double command;
  char result[64];
  /* servo (and actuator above): the step, the bus ID, the fields taken */
  uint64_t step;
  int servo_id;
  int nreg;
  char reg_name[HIL_LOG_MAX_REGISTERS][HIL_LOG_REGISTER_NAME_MAX];
  uint32_t reg_value[HIL_LOG_MAX_REGISTERS];
  /* status and end: the record's JSON text (valid until the next call) */
  const char *json;
} hil_log_record;

typedef struct hil_log_reader hil_log_reader;

/* Opens a log and reads its header record. NULL with a message naming the file, record and
 * offset when the file is not an achilles log. */
hil_log_reader *hil_log_reader_open(const char *path, char *err, size_t err_sz);
/* Opens a log or CSV file for reading: regular files only, through sim_file_open (a FIFO would
 * block, /dev/zero never end, and the readers rewind). NULL with "PATH: why" in err. */
FILE *hil_log_open_input(const char *path, char *err, size_t err_sz);
const hil_log_header *hil_log_reader_header(const hil_log_reader *r);
/* Next record after the header: 1 with *rec filled, 0 at the end of the file, or a negative
 * code with a message "FILE: record N at byte B: what" (HIL_LOG_ECRC, HIL_LOG_EFORMAT,
 * HIL_LOG_ETRUNC, HIL_LOG_EIO). After ECRC or EFORMAT the next call continues with the
 * following line, so a reader may skip damaged records; ETRUNC is always the last result.
 * A sample record whose t is not a number (null) is EFORMAT. */
int hil_log_next(hil_log_reader *r, hil_log_record *rec, char *err, size_t err_sz);
/* 1 when an "end" record was read (the run closed the log cleanly). */
int hil_log_reader_saw_end(const hil_log_reader *r);
void hil_log_reader_close(hil_log_reader **r);

/* --- series: one channel of one sensor, from a log or a CSV file ----------------------------- */

/* CSV layout (docs/logs.md): a header line "time,<sensor>.<channel>,..." then one row per time;
 * time in s, values in counts or SI units, blank cells are missing. A column
 * "<sensor>.<channel>.meas" is read as "<sensor>.<channel>" and "<sensor>.<channel>.true" as its
 * truth (the layout of `achilles sensors --csv`). */
typedef struct hil_series {
  size_t n;          /* samples (missing and invalid ones are left out) */
  double *t;         /* s */
  double *v;         /* measured values */
  double *truth;     /* truth per sample, or NULL when the source has none */
  char unit[HIL_LOG_UNIT_MAX];  /* "" when unknown (CSV) */
  char type[16];     /* sensor type from a log header, "" for CSV */
  double rate_hz;    /* from the log header, else 0 */
  long long skipped; /* damaged records skipped (log), samples that do not match the header
                        included */
  int end_missing;   /* a log without its end record (the recording did not close cleanly) */
  char warning[512]; /* the first damage met, "" when none */
} hil_series;

/* Loads sensor.channel (a sensor name and a channel name) from `path`, a log (detected by its
 * first bytes) or a CSV file. Returns 0, or a negative code with a message. A damaged record in
 * a log is skipped and counted (series.warning names the first one). */
int hil_series_load(hil_series *s, const char *path, const char *sensor, const char *channel,
                    char *err, size_t err_sz);
void hil_series_free(hil_series *s);

/* Splits one CSV line in place at its commas, trimming blanks and line ends from each field.
 * Stores up to max field pointers and returns the number of fields (which may be more). No
 * quoting: the CSV files of docs/logs.md hold names and numbers only. */
int hil_csv_split(char *line, char **field, int max);
/* One CSV cell as these readers take it: "" gives NaN (a missing value) and 0, a finite number
 * gives it and 0; anything else (text, "nan", "inf", out of range) returns -1. Shared with
 * sysid's CSV reader (sysid/series_csv.c). */
int hil_csv_number(const char *cell, double *out);

#endif
