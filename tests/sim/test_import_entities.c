/* tests/sim/test_import_entities.c: an attribute value is read whole, whatever it holds. An
 * entity reference (`model="x&n;y"`, n declared in the file's DTD) splits the value into
 * several nodes in libxml2's tree, and the importers used to read only the first: the name
 * became "x". Predefined entities and character references were already whole. */
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

#include "import_fixture.h"
#include "sim/import/import.h"
#include "support/skip.h"
#include "support/tmp.h"

static const char *string_at(const cJSON *obj, const char *key) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, key);
  assert_true(cJSON_IsString(s));
  return s->valuestring;
}

static void test_mjcf_names_with_entities(void **state) {
  (void)state;
  cJSON *json = json_of("entities.xml",
                        "<!DOCTYPE mujoco [<!ENTITY n \"NN\"> <!ENTITY m \"(&n;)\">]>\n"
                        "<mujoco model=\"x&n;y\">\n"
                        "  <worldbody>\n"
                        "    <body name=\"p&m;q\">\n"
                        "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>\n"
                        "      <joint name=\"a&amp;&#x42;&n;\"/>\n"
                        "    </body>\n"
                        "  </worldbody>\n"
                        "</mujoco>\n");
  assert_string_equal(string_at(json, "name"), "xNNy");
  assert_string_equal(string_at(body_of(json, 0), "name"), "p(NN)q");
  const cJSON *joint = cJSON_GetObjectItemCaseSensitive(body_of(json, 0), "joint");
  assert_string_equal(string_at(joint, "name"), "a&BNN");
  cJSON_Delete(json);
}

/* numbers too: a value cut at the reference would lose its last components */
static void test_urdf_values_with_entities(void **state) {
  (void)state;
  cJSON *json = json_of("entities.urdf",
                        "<!DOCTYPE robot [<!ENTITY arm \"upper\"> <!ENTITY z \"0 0 1\">]>\n"
                        "<robot name=\"my_&arm;_arm\">\n"
                        "  <link name=\"base\"/>\n"
                        "  <link name=\"&arm;\">\n"
                        "    <inertial><mass value=\"1\"/>\n"
                        "      <inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
                        "    </inertial>\n"
                        "  </link>\n"
                        "  <joint name=\"&arm;_joint\" type=\"continuous\">\n"
                        "    <parent link=\"base\"/><child link=\"&arm;\"/><axis xyz=\"&z;\"/>\n"
                        "  </joint>\n"
                        "</robot>\n");
  assert_string_equal(string_at(json, "name"), "my_upper_arm");
  const cJSON *b = body_of(json, 0);
  assert_string_equal(string_at(b, "name"), "upper");
  const cJSON *joint = cJSON_GetObjectItemCaseSensitive(b, "joint");
  assert_string_equal(string_at(joint, "name"), "upper_joint");
  const cJSON *axis = cJSON_GetObjectItemCaseSensitive(joint, "axis");
  assert_int_equal(cJSON_GetArraySize(axis), 3);
  assert_true(cJSON_GetArrayItem(axis, 2)->valuedouble == 1);
  cJSON_Delete(json);
}

TS_MAIN_WITH(ts_tmp_setup, ts_tmp_teardown, test_mjcf_names_with_entities,
             test_urdf_values_with_entities)
