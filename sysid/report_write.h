/* sysid/report_write.h: a fit's report (sysid_report, sysid.h) as text for the console and as
 * JSON for programs (`achilles sysid`, --report FILE.json; the schema is docs/sysid.md
 * section 6). */
#ifndef ACHILLES_SYSID_REPORT_WRITE_H
#define ACHILLES_SYSID_REPORT_WRITE_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "sysid/sysid.h"

/* where the fit's data came from, for both forms */
typedef struct sysid_report_source {
  const char *robot, *log; /* file names */
  int samples, windows;    /* the series' samples, the problem's windows */
} sysid_report_source;

/* The text report: a line of totals, each parameter (initial, value, standard error, unit),
 * the correlations above 0.9, each joint's residuals before and after, and what the log cannot
 * determine. */
void sysid_report_print(FILE *out, const sysid_report *r, const sysid_report_source *src);

/* The JSON report (caller frees with cJSON_Delete); NULL when out of memory. Non-finite numbers
 * (a standard error the log cannot give) are null. */
cJSON *sysid_report_json(const sysid_report *r, const sysid_report_source *src);

#endif
