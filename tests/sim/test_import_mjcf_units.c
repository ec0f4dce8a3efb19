/* tests/sim/test_import_mjcf_units.c: MJCF orientations and units that only the MuJoCo
 * comparison pinned down: `xyaxes` (the frame's x and y axes, y orthogonalised, z = x × y: "0 1 0
 * -1 0 0" is +90° about z), and a slide joint's `range`, which stays in metres when the
 * compiler's angle unit is degrees (MJCF's default) while a hinge's is converted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import_fixture.h"
#include "sim/import/import.h"
#include "support/skip.h"
#include "support/tmp.h"

static const double PI = 3.14159265358979323846;

static void expect_vector(const cJSON *v, const double *want, int n, double tol,
                          const char *what) {
  assert_int_equal(cJSON_GetArraySize(v), n);
  for (int k = 0; k < n; k++) {
    const double got = cJSON_GetArrayItem(v, k)->valuedouble;
    if (!(fabs(got - want[k]) <= tol)) {
      fail_msg("%s[%d] = %.17g, expected %.17g", what, k, got, want[k]);
    }
  }
}

/* one body per xyaxes, its quaternion against the rotation the axes name */
static void test_xyaxes(void **state) {
  (void)state;
  const double h = sqrt(0.5);
  static const char *const cases[] = {
      "0 1 0 -1 0 0",   /* +90° about z: x → y */
      "0 1 0 -1 0.3 0", /* the same: y is made orthogonal to x */
      "1 0 0 0 0 1",    /* +90° about x: y → z */
      "0 0 -1 0 1 0",   /* +90° about y: x → −z */
      "2 0 0 0 3 0",    /* lengths do not matter: the identity */
  };
  const double want[][4] = {{h, 0, 0, h}, {h, 0, 0, h}, {h, h, 0, 0}, {h, 0, h, 0}, {1, 0, 0, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char xml[512];
    snprintf(xml, sizeof xml,
             "<mujoco>\n  <worldbody>\n    <body name=\"b\" xyaxes=\"%s\">\n"
             "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
             "      <joint name=\"j\"/>\n    </body>\n  </worldbody>\n</mujoco>\n",
             cases[k]);
    cJSON *json = json_of("xyaxes.xml", xml);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(body_of(json, 0), "quat");
    char what[64];
    snprintf(what, sizeof what, "xyaxes=\"%s\": quat", cases[k]);
    if (q) {
      expect_vector(q, want[k], 4, 1e-12, what);
    } else { /* the identity may be left out */
      assert_true(want[k][0] == 1);
    }
    cJSON_Delete(json);
  }
}

/* degrees (the default): a hinge's range in rad, a slide's kept in m; radians: both as given */
static void test_slide_range_in_metres(void **state) {
  (void)state;
  for (int radian = 0; radian < 2; radian++) {
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<mujoco>\n  <compiler angle=\"%s\"/>\n  <worldbody>\n"
             "    <body name=\"carriage\">\n"
             "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
             "      <joint name=\"rail\" type=\"slide\" axis=\"1 0 0\" range=\"-0.5 0.25\"/>\n"
             "      <body name=\"arm\">\n"
             "        <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
             "        <joint name=\"hinge\" range=\"%s\"/>\n"
             "      </body>\n    </body>\n  </worldbody>\n</mujoco>\n",
             radian ? "radian" : "degree", radian ? "-1.5 0.75" : "-90 45");
    cJSON *json = json_of("ranges.xml", xml);
    const double slide[2] = {-0.5, 0.25};
    const double hinge[2] = {radian ? -1.5 : -PI / 2, radian ? 0.75 : PI / 4};
    expect_vector(cJSON_GetObjectItemCaseSensitive(
                      cJSON_GetObjectItemCaseSensitive(body_of(json, 0), "joint"), "range"),
                  slide, 2, 0, radian ? "radian: slide range" : "degree: slide range");
    expect_vector(cJSON_GetObjectItemCaseSensitive(
                      cJSON_GetObjectItemCaseSensitive(body_of(json, 1), "joint"), "range"),
                  hinge, 2, 1e-15, radian ? "radian: hinge range" : "degree: hinge range");
    cJSON_Delete(json);
  }
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_xyaxes, test_slide_range_in_metres)
