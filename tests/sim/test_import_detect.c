/* tests/sim/test_import_detect.c: which format a .xml robot file is in comes from its root
 * element, not from a mention of <robot> or <mujoco> anywhere in its first 4 KB: an MJCF whose
 * licence comment quotes the URDF it came from was read as URDF ("the root element is <mujoco>,
 * expected <robot>"), and a URDF whose comment names MuJoCo as MJCF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/import/import.h"
#include "support/skip.h"
#include "support/tmp.h"


static const char mjcf_body[] =
    "<mujoco model=\"arm\">\n  <worldbody>\n    <body name=\"b\">\n"
    "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
    "      <joint name=\"j\"/>\n    </body>\n  </worldbody>\n</mujoco>\n";
static const char urdf_body[] =
    "<robot name=\"arm\">\n  <link name=\"base\"/>\n  <link name=\"b\">\n"
    "    <inertial><mass value=\"1\"/>\n"
    "      <inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
    "  </link>\n  <joint name=\"j\" type=\"continuous\"><parent link=\"base\"/>"
    "<child link=\"b\"/></joint>\n</robot>\n";

/* writes PROLOG then BODY to dir/NAME; the format detected, and the file converts as it */
static sim_import_format detect(const char *name, const char *prolog, const char *body) {
  char path[128], err[512] = "";
  ts_tmp_path(path, sizeof path, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(prolog, f);
  fputs(body, f);
  fclose(f);
  const sim_import_format format = sim_import_detect(path);
  cJSON *json = sim_import_file(path, NULL, err, sizeof err);
  if (!json) {
    fail_msg("%s: %s", name, err);
  }
  cJSON_Delete(json);
  return format;
}

/* a licence comment of 5 KB that quotes the URDF the MJCF was made from */
static void test_mjcf_mentioning_robot(void **state) {
  (void)state;
  static char prolog[8192];
  snprintf(prolog, sizeof prolog,
           "<?xml version=\"1.0\"?>\n<!-- converted from arm.urdf, whose root was <robot name=\"arm\">.\n");
  for (int line = 0; line < 80; line++) {
    strcat(prolog, "     Permission is granted to use, copy and modify this file freely.\n");
  }
  strcat(prolog, "-->\n");
  assert_true(strlen(prolog) > 4096);
  assert_int_equal(detect("long_comment.xml", prolog, mjcf_body), SIM_IMPORT_MJCF);
  /* the same mention close to a root within the first 4 KB */
  assert_int_equal(detect("short_comment.xml", "<!-- from <robot name=\"arm\"> -->\n", mjcf_body),
                   SIM_IMPORT_MJCF);
}

static void test_urdf_mentioning_mujoco(void **state) {
  (void)state;
  assert_int_equal(detect("urdf.xml", "<?xml version=\"1.0\"?>\n"
                                      "<!-- also as <mujoco model=\"arm\"> in arm_mjcf.xml -->\n",
                          urdf_body),
                   SIM_IMPORT_URDF);
}

/* a byte order mark, a DOCTYPE with an internal subset naming the other root */
static void test_prolog_kinds(void **state) {
  (void)state;
  assert_int_equal(detect("bom.xml", "\xef\xbb\xbf<?xml version=\"1.0\"?>\n", urdf_body),
                   SIM_IMPORT_URDF);
  assert_int_equal(detect("doctype.xml",
                          "<!DOCTYPE mujoco [\n  <!ENTITY note \"not a <robot> file\">\n]>\n",
                          mjcf_body),
                   SIM_IMPORT_MJCF);
  assert_int_equal(detect("plain.xml", "", urdf_body), SIM_IMPORT_URDF);
  assert_int_equal(detect("plain_mjcf.xml", "", mjcf_body), SIM_IMPORT_MJCF);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_mjcf_mentioning_robot, test_urdf_mentioning_mujoco,
             test_prolog_kinds)
