/* tests/tools/test_cli_overlap.c: what a user sees of an MJCF arm whose links overlap at rest
 * and whose <option> the model does not wholly take: `achilles sim`, `achilles run`,
 * `achilles sensors` and `achilles convert` name both on stderr (file and line, the bodies and the depth); `achilles convert
 * --exclude-overlapping` writes an exclude for the pair, and the JSON it writes loads quietly
 * with MuJoCo's solver settings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "support/skip.h"
#include "support/spawn.h"
#include "support/tmp.h"

/* the third link folded back over the first (their capsules 0.08 apart, radii 0.05) */
static const char arm[] =
    "<mujoco model=\"folded\">\n"
    "  <option timestep=\"0.001\" density=\"1.2\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"l1\"><joint name=\"j1\" axis=\"0 0 1\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.05\"/>\n"
    "      <body name=\"l2\" pos=\"0.3 0 0\"><joint name=\"j2\" axis=\"0 0 1\"/>\n"
    "        <geom type=\"sphere\" pos=\"0 0.04 0\" size=\"0.03\"/>\n"
    "        <body name=\"l3\" pos=\"0 0.08 0\"><joint name=\"j3\" axis=\"0 0 1\"/>\n"
    "          <geom type=\"capsule\" fromto=\"0 0 0 -0.3 0 0\" size=\"0.05\"/>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static char out[1 << 16], json[1 << 16];

static void test_notes_and_excludes(void **state) {
  (void)state;
  char dir[128], path[256], converted[256];
  ts_tmpdir(dir, sizeof dir, "overlap");
  snprintf(path, sizeof path, "%s/folded.xml", dir);
  snprintf(converted, sizeof converted, "%s/folded.json", dir);
  ts_write_file(path, arm);
  /* sim: the CSV on stdout, the notes on stderr */
  assert_int_equal(ts_shellf(out, sizeof out, "%s sim %s --duration 0.002 2>&1 >/dev/null",
                             ACHILLES_BIN, path), 0);
  print_message("%s", out);
  assert_non_null(strstr(out, "achilles sim: note: "));
  assert_non_null(strstr(out, "folded.xml:2: <option density> ignored: not used"));
  assert_non_null(strstr(out, "bodies \"l1\" and \"l3\" overlap by 20 mm at the initial pose"));
  /* run says the same before it starts (and nothing of it with --quiet) */
  assert_int_equal(ts_shellf(out, sizeof out, "%s run %s --duration 0.002 --no-zmq 2>&1 "
                             ">/dev/null", ACHILLES_BIN, path), 0);
  print_message("%s", out);
  assert_non_null(strstr(out, "achilles run: note: "));
  assert_non_null(strstr(out, "folded.xml:2: <option density> ignored: not used"));
  assert_non_null(strstr(out, "bodies \"l1\" and \"l3\" overlap by 20 mm at the initial pose"));
  assert_int_equal(ts_shellf(out, sizeof out, "%s run %s --duration 0.002 --no-zmq --quiet 2>&1 "
                             ">/dev/null", ACHILLES_BIN, path), 0);
  assert_null(strstr(out, "note:"));
  /* and sensors (here refused for want of a sensors file, after its notes) */
  ts_shellf(out, sizeof out, "%s sensors %s --duration 0.002 2>&1 >/dev/null", ACHILLES_BIN, path);
  assert_non_null(strstr(out, "achilles sensors: note: "));
  assert_non_null(strstr(out, "folded.xml:2: <option density> ignored: not used"));
  /* convert says the same; with --exclude-overlapping the JSON holds the pair's exclude */
  assert_int_equal(ts_shellf(out, sizeof out, "%s convert %s --exclude-overlapping --out %s 2>&1",
                             ACHILLES_BIN, path, converted), 0);
  assert_non_null(strstr(out, "bodies \"l1\" and \"l3\" overlap by 20 mm"));
  snprintf(json, sizeof json, "%s", ts_slurp(converted));
  assert_non_null(strstr(json, "\"body1\":\t\"l1\""));
  assert_non_null(strstr(json, "\"body2\":\t\"l3\""));
  assert_non_null(strstr(json, "\"solver\":\t\"newton\""));
  assert_non_null(strstr(json, "\"solver_iterations\":\t100"));
  /* the JSON loads without a note */
  assert_int_equal(ts_shellf(out, sizeof out, "%s sim %s --duration 0.002 2>&1 >/dev/null",
                             ACHILLES_BIN, converted), 0);
  assert_string_equal(out, "");
  ts_rmtree(dir);
}

TS_MAIN(test_notes_and_excludes)
