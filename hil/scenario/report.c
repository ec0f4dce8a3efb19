/* hil/scenario/report.c: a result for people (the console summary) and for CI servers (JUnit
 * XML as GitHub's and GitLab's test reporters read it (testsuites > testsuite > testcase, a
 * <failure message=...> for a failed check; GitLab shows a testcase's classname as its suite,
 * so each run's classname is its own: the campaign id, else the scenario's name). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hil/scenario/scenario.h"

static const char *text_of(const cJSON *obj, const char *key, const char *fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : fallback;
}

static double number_of(const cJSON *obj, const char *key, double fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

int hil_scenario_result_passed(const cJSON *result) {
  return strcmp(text_of(result, "verdict", ""), "pass") == 0;
}

void hil_scenario_print_summary(FILE *out, const cJSON *r) {
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
  const int n = cJSON_GetArraySize(checks), failed = (int)number_of(r, "failed", 0);
  fprintf(out, "%s%s%s (%s, %s, %g s", text_of(r, "scenario", "?"),
          cJSON_GetObjectItemCaseSensitive(r, "id") ? " " : "", text_of(r, "id", ""),
          text_of(r, "robot", "?"), text_of(r, "mode", "?"), number_of(r, "duration_s", 0));
  if (cJSON_GetObjectItemCaseSensitive(r, "seed")) {
    fprintf(out, ", seed %.0f", number_of(r, "seed", 0));
  }
  fprintf(out, "): %s", hil_scenario_result_passed(r) ? "PASS" : "FAIL");
  if (failed > 0) {
    fprintf(out, ", %d of %d checks failed", failed, n);
  }
  fprintf(out, "\n");
  const cJSON *events = cJSON_GetObjectItemCaseSensitive(r, "events");
  for (int i = 0; i < cJSON_GetArraySize(events); i++) {
    const cJSON *e = cJSON_GetArrayItem(events, i);
    fprintf(out, "  at %7.3f s  %s\n", number_of(e, "t", 0), text_of(e, "event", ""));
  }
  for (int i = 0; i < n; i++) {
    const cJSON *c = cJSON_GetArrayItem(checks, i);
    const int pass = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"));
    fprintf(out, "  %s  %-34s %-14s %s\n", pass ? "pass" : "FAIL", text_of(c, "name", "?"),
            text_of(c, "type", "?"), text_of(c, "message", ""));
  }
  if (cJSON_GetObjectItemCaseSensitive(r, "error")) {
    fprintf(out, "  error: %s\n", text_of(r, "error", ""));
  }
  const cJSON *fw = cJSON_GetObjectItemCaseSensitive(r, "firmware");
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(fw, "exit_code");
  if (cJSON_IsNumber(code)) {
    fprintf(out, "  firmware exited with %d at %.3f s%s\n", code->valueint,
            number_of(fw, "exited_at", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fw, "stopped_by_scenario"))
                ? " (stopped by the timeline)" : "");
  }
  const cJSON *timing = cJSON_GetObjectItemCaseSensitive(r, "timing");
  if (timing) {
    fprintf(out, "  realtime: late p50/p99/max %.0f/%.0f/%.0f us, %.0f overruns\n",
            1e6 * number_of(timing, "late_p50_s", 0), 1e6 * number_of(timing, "late_p99_s", 0),
            1e6 * number_of(timing, "late_max_s", 0), number_of(timing, "overruns", 0));
  }
}

/* --- JUnit XML -------------------------------------------------------------------------------- */

/* text for an attribute or element: the five XML specials escaped, control characters (which
 * XML 1.0 cannot hold) as '?' */
static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '&') {
      fputs("&amp;", f);
    } else if (c == '<') {
      fputs("&lt;", f);
    } else if (c == '>') {
      fputs("&gt;", f);
    } else if (c == '"') {
      fputs("&quot;", f);
    } else if (c == '\'') {
      fputs("&apos;", f);
    } else if (c < 0x20 && c != '\n' && c != '\t') {
      fputc('?', f);
    } else {
      fputc(c, f);
    }
  }
}

static void junit_case(FILE *f, const char *classname, const cJSON *c) {
  const int pass = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"));
  fputs("    <testcase name=\"", f);
  xml_text(f, text_of(c, "name", "?"));
  fputs("\" classname=\"", f);
  xml_text(f, classname);
  fputs("\" time=\"0\"", f);
  if (pass) {
    fputs("/>\n", f);
    return;
  }
  fputs(">\n      <failure message=\"", f);
  xml_text(f, text_of(c, "message", "failed"));
  fputs("\" type=\"", f);
  xml_text(f, text_of(c, "type", "check"));
  fputs("\">", f);
  const cJSON *measured = cJSON_GetObjectItemCaseSensitive(c, "measured");
  if (cJSON_IsNumber(measured)) {
    fprintf(f, "measured: %.17g ", measured->valuedouble);
    xml_text(f, text_of(c, "unit", ""));
  } else {
    fputs("measured: none", f);
  }
  if (cJSON_GetObjectItemCaseSensitive(c, "bound")) {
    fprintf(f, "\nbound: %.17g ", number_of(c, "bound", 0));
    xml_text(f, text_of(c, "unit", ""));
  }
  if (cJSON_GetObjectItemCaseSensitive(c, "at")) {
    fprintf(f, "\nat: %.6f s (simulation time)", number_of(c, "at", 0));
  }
  fputs("</failure>\n    </testcase>\n", f);
}

static void junit_suite(FILE *f, const cJSON *r) {
  const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r, "checks");
  const char *name = text_of(r, "id", text_of(r, "scenario", "scenario"));
  const int n = cJSON_GetArraySize(checks);
  int failed = 0;
  for (int i = 0; i < n; i++) {
    const cJSON *c = cJSON_GetArrayItem(checks, i);
    failed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "pass"));
  }
  const int errors = cJSON_GetObjectItemCaseSensitive(r, "error") != NULL;
  fputs("  <testsuite name=\"", f);
  xml_text(f, name);
  fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.6f\">\n",
          n + errors, failed, errors, number_of(r, "end_time", 0));
  fputs("    <properties>\n", f);
  const char *keys[] = {"scenario", "robot", "mode", "trajectory_digest", "inputs_digest"};
  for (int i = 0; i < 5; i++) {
    fprintf(f, "      <property name=\"%s\" value=\"", keys[i]);
    xml_text(f, text_of(r, keys[i], ""));
    fputs("\"/>\n", f);
  }
  if (cJSON_GetObjectItemCaseSensitive(r, "seed")) {
    fprintf(f, "      <property name=\"seed\" value=\"%.0f\"/>\n", number_of(r, "seed", 0));
  }
  fputs("    </properties>\n", f);
  for (int i = 0; i < n; i++) {
    junit_case(f, name, cJSON_GetArrayItem(checks, i));
  }
  if (errors) {
    fputs("    <testcase name=\"the scenario runs\" classname=\"", f);
    xml_text(f, name);
    fputs("\" time=\"0\">\n      <error message=\"", f);
    xml_text(f, text_of(r, "error", ""));
    fputs("\" type=\"error\"/>\n    </testcase>\n", f);
  }
  fputs("  </testsuite>\n", f);
}

int hil_scenario_write_junit(const char *path, const cJSON *const *results, int n, char *err,
                             size_t err_sz) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) {
    snprintf(err, err_sz, "%s: cannot open for writing: %s", path, strerror(errno));
    return -1;
  }
  int tests = 0, failures = 0, errors = 0;
  double time = 0;
  for (int i = 0; i < n; i++) {
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(results[i], "checks");
    tests += cJSON_GetArraySize(checks);
    failures += (int)number_of(results[i], "failed", 0);
    if (cJSON_GetObjectItemCaseSensitive(results[i], "error")) {
      errors++, tests++, failures--;
    }
    time += number_of(results[i], "end_time", 0);
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<testsuites name=\"achilles\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
             "time=\"%.6f\">\n", tests, failures, errors, time);
  for (int i = 0; i < n; i++) {
    junit_suite(f, results[i]);
  }
  fputs("</testsuites>\n", f);
  const int bad = ferror(f);
  if ((f != stdout && fclose(f) != 0) || bad) {
    snprintf(err, err_sz, "%s: write failed: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}
