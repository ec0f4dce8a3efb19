/* tests/sim/import_fixture.c: the import suites' robots, files and reports (import_fixture.h). */
#include "import_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "support/tmp.h"

const char arm_deg[] =
    "<mujoco model=\"subset_arm\">\n"
    "  <compiler autolimits=\"true\"/>\n"
    "  <option timestep=\"0.001\" gravity=\"0 0 -9.81\" integrator=\"RK4\">\n"
    "    <flag contact=\"disable\" limit=\"disable\"/>\n"
    "  </option>\n"
    "  <default>\n"
    "    <joint damping=\"0.05\" armature=\"0.001\"/>\n"
    "    <geom density=\"800\" rgba=\"0.5 0.5 0.5 1\"/>\n"
    "    <default class=\"wrist\">\n"
    "      <joint damping=\"0.01\" axis=\"1 0 0\" range=\"-90 90\"/>\n"
    "      <geom type=\"box\" size=\"0.02 0.015 0.01\"/>\n"
    "    </default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <light pos=\"0 0 2\"/>\n"
    "    <geom type=\"plane\" size=\"1 1 0.1\"/>\n"
    "    <body name=\"base\" pos=\"0 0 0.05\" euler=\"0 0 30\">\n"
    "      <joint name=\"yaw\" axis=\"0 0 1\" range=\"-170 170\"/>\n"
    "      <geom type=\"cylinder\" size=\"0.04 0.03\"/>\n"
    "      <body name=\"upper\" pos=\"0 0 0.06\" axisangle=\"1 0 0 10\">\n"
    "        <joint name=\"shoulder\" axis=\"0 1 0\" pos=\"0 0 0.01\" stiffness=\"0.5\" springref=\"20\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.25 0 0\" size=\"0.02\"/>\n"
    "        <geom type=\"sphere\" pos=\"0.25 0 0\" size=\"0.03\" mass=\"0.2\"/>\n"
    "        <body name=\"fore\" pos=\"0.25 0 0\" quat=\"0.9961947 0 0.0871557 0\">\n"
    "          <joint name=\"elbow\" type=\"hinge\" axis=\"0 1 0\" pos=\"0.005 0 0\"/>\n"
    "          <inertial pos=\"0.1 0 0.002\" quat=\"0.9238795 0 0 0.3826834\" mass=\"0.4\"\n"
    "                    diaginertia=\"0.0002 0.0014 0.0013\"/>\n"
    "          <geom type=\"capsule\" fromto=\"0 0 0 0.2 0 0\" size=\"0.015\"/>\n"
    "          <body name=\"mount\" pos=\"0.2 0 0\">\n"
    "            <site name=\"camera\" pos=\"0.01 0.02 0\"/>\n"
    "            <body name=\"hand\" pos=\"0.02 0 0\" childclass=\"wrist\">\n"
    "              <joint name=\"wrist\"/>\n"
    "              <geom pos=\"0.02 0 0\"/>\n"
    "              <site name=\"tool\" pos=\"0.04 0 0\"/>\n"
    "              <body name=\"slider\" pos=\"0.04 0 0\">\n"
    "                <joint name=\"grip\" type=\"slide\" axis=\"0 1 0\" range=\"0 0.03\"\n"
    "                       damping=\"2\"/>\n"
    "                <geom class=\"wrist\" size=\"0.005 0.01 0.02\"/>\n"
    "              </body>\n"
    "            </body>\n"
    "          </body>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator>\n"
    "    <motor name=\"m_yaw\" joint=\"yaw\" gear=\"10\" ctrlrange=\"-1 1\"/>\n"
    "    <motor name=\"m_shoulder\" joint=\"shoulder\" gear=\"5\"/>\n"
    "    <position name=\"p_wrist\" joint=\"wrist\" kp=\"0.5\"/>\n"
    "  </actuator>\n"
    "</mujoco>\n";

const char twin_mjcf[] =
    "<mujoco model=\"twin\">\n"
    "  <compiler angle=\"radian\" eulerseq=\"XYZ\" autolimits=\"true\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"base\" pos=\"0 0 0.1\">\n"
    "      <inertial pos=\"0 0 0.02\" mass=\"1.5\" diaginertia=\"0.002 0.002 0.003\"/>\n"
    "      <body name=\"link1\" pos=\"0 0 0.05\" euler=\"0.1 0.2 0.3\">\n"
    "        <joint name=\"j1\" axis=\"0 1 0\" range=\"-1.5 1.5\" damping=\"0.1\"/>\n"
    "        <inertial pos=\"0.1 0 0\" euler=\"0.2 0 0.3\" mass=\"0.5\"\n"
    "                  diaginertia=\"0.0001 0.001 0.001\"/>\n"
    "        <body name=\"link2\" pos=\"0.20877582561890373 0.004794255386042030 0\"\n"
    "              euler=\"0 0 0.5\">\n"
    "          <joint name=\"j2\" type=\"slide\" axis=\"1 0 0\" range=\"0 0.1\"/>\n"
    "          <inertial pos=\"0.05 0 0\" mass=\"0.2\" diaginertia=\"0.00002 0.0002 0.0002\"/>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

const char multi_mjcf[] =
    "<mujoco model=\"multi_joint\">\n"
    "  <compiler angle=\"degree\" autolimits=\"true\"/>\n"
    "  <option timestep=\"0.001\" integrator=\"Euler\">\n"
    "    <flag contact=\"disable\" limit=\"disable\"/>\n"
    "  </option>\n"
    "  <default>\n"
    "    <joint damping=\"0.02\" armature=\"0.001\"/>\n"
    "    <geom density=\"500\"/>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <body name=\"torso\" pos=\"0 0 1\" euler=\"0 10 0\">\n"
    "      <joint name=\"rootx\" type=\"slide\" axis=\"1 0 0\"/>\n"
    "      <joint name=\"rootz\" type=\"slide\" axis=\"0 0 1\"/>\n"
    "      <joint name=\"rooty\" type=\"hinge\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0 0 0.4\" size=\"0.05\"/>\n"
    "      <body name=\"leg\" pos=\"0 0 -0.05\">\n"
    "        <joint name=\"hip\" axis=\"0 1 0\" range=\"-60 60\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.05 0 -0.4\" size=\"0.03\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "    <body name=\"floater\" pos=\"1 0 2\" quat=\"0.9 0.1 0.2 0.3\">\n"
    "      <freejoint name=\"float\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.05 0.02\"/>\n"
    "      <body name=\"pend\" pos=\"0.1 0 0\">\n"
    "        <joint name=\"ball\" type=\"ball\" damping=\"0.01\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0 0.05 -0.3\" size=\"0.02\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

void write_file(char *path, size_t path_sz, const char *name, const char *text) {
  ts_tmp_path(path, path_sz, name);
  ts_write_file(path, text);
}

void write_cube_stl(const char *name) {
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  char text[8192], path[256];
  size_t n = (size_t)snprintf(text, sizeof text, "solid cube\n");
  for (int f = 0; f < 6; f++) {
    const int tri[2][3] = {{faces[f][0], faces[f][1], faces[f][2]},
                           {faces[f][0], faces[f][2], faces[f][3]}};
    for (int t = 0; t < 2; t++) {
      n += (size_t)snprintf(text + n, sizeof text - n, "facet normal 0 0 0\nouter loop\n");
      for (int v = 0; v < 3; v++) {
        const int c = tri[t][v];
        n += (size_t)snprintf(text + n, sizeof text - n, "vertex %g %g %g\n",
                              c & 1 ? 0.05 : -0.05, c & 2 ? 0.05 : -0.05, c & 4 ? 0.05 : -0.05);
      }
      n += (size_t)snprintf(text + n, sizeof text - n, "endloop\nendfacet\n");
    }
  }
  snprintf(text + n, sizeof text - n, "endsolid cube\n");
  write_file(path, sizeof path, name, text);
}

void write_cube_stl_binary(const char *name) {
  static const int faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  unsigned char data[84 + 12 * 50];
  memset(data, 0, sizeof data);
  data[80] = 12; /* triangles, little-endian */
  int t = 0;
  for (int f = 0; f < 6; f++) {
    const int tri[2][3] = {{faces[f][0], faces[f][1], faces[f][2]},
                           {faces[f][0], faces[f][2], faces[f][3]}};
    for (int h = 0; h < 2; h++, t++) {
      for (int v = 0; v < 3; v++) {
        const int c = tri[h][v];
        const float xyz[3] = {c & 1 ? 0.05f : -0.05f, c & 2 ? 0.05f : -0.05f,
                              c & 4 ? 0.05f : -0.05f};
        memcpy(data + 84 + 50 * t + 12 + 12 * v, xyz, sizeof xyz); /* x86: little-endian */
      }
    }
  }
  char path[256];
  ts_tmp_path(path, sizeof path, name);
  ts_write_bytes(path, data, sizeof data);
}

static void collect(void *ctx, const char *message) {
  reports *r = ctx;
  size_t used = strlen(r->text);
  snprintf(r->text + used, sizeof r->text - used, "%s\n", message);
  r->n++;
}

sim_model *import(const char *path, reports *r, int strict, char *err, size_t err_sz) {
  sim_import_options o = {strict, collect, r};
  return sim_import_load_file(path, &o, err, err_sz);
}

sim_model *import_text(const char *name, const char *text, reports *r) {
  char path[256];
  return import_text_at(name, text, r, path, sizeof path);
}

sim_model *import_text_at(const char *name, const char *text, reports *r, char *path,
                          size_t path_sz) {
  char err[1024];
  write_file(path, path_sz, name, text);
  sim_model *m = import(path, r, 0, err, sizeof err);
  if (!m) {
    fail_msg("%s", err);
  }
  return m;
}

void import_refused(const char *name, const char *text, const char *message) {
  char path[256], err[1024];
  write_file(path, sizeof path, name, text);
  reports r = {"", 0};
  sim_model *m = import(path, &r, 0, err, sizeof err);
  if (m || !strstr(err, message)) {
    fail_msg("%s: got '%s', expected '%s'", name, m ? "a model" : err, message);
  }
}

cJSON *json_of(const char *name, const char *text) {
  char path[256], err[512] = "";
  ts_tmp_path(path, sizeof path, name);
  ts_write_file(path, text);
  cJSON *json = sim_import_file(path, NULL, err, sizeof err);
  if (!json) {
    fail_msg("%s: %s", name, err);
  }
  return json;
}

const cJSON *body_of(const cJSON *json, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(json, "bodies"), i);
}
