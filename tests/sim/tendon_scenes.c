/* tests/sim/tendon_scenes.c: the MJCF scenes of the tendon tests (tendon_scenes.h), and loading
 * one on both sides. */
#include "tendon_scenes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "sim/import/import.h"
#include "support/tmp.h"

/* Three bodies (two hinges on skew axes, a slide) with sites on each and on the world; a sphere
 * on the first body and a cylinder on the second to wrap around. Tendons: sites only, the
 * sphere with and without a side site (outside it, and inside it: MuJoCo's inside wrap), the
 * cylinder with and without a side site, a pulley, and a fixed tendon. */
const char tendon_scene_paths[] =
    "<mujoco model=\"paths\">\n"
    "  <compiler angle=\"radian\"/>\n"
    "  <worldbody>\n"
    "    <site name=\"w0\" pos=\"0 0.1 0.3\"/>\n"
    "    <site name=\"w1\" pos=\"0.25 -0.12 0.05\"/>\n"
    "    <site name=\"w2\" pos=\"0.3 0.2 -0.05\"/>\n"
    "    <body name=\"b1\">\n"
    "      <joint name=\"j1\" axis=\"0 0 1\"/>\n"
    "      <geom name=\"arm1\" type=\"capsule\" fromto=\"0 0 0 0.4 0 0\" size=\"0.03\" "
    "contype=\"0\" conaffinity=\"0\"/>\n"
    "      <geom name=\"ball\" type=\"sphere\" pos=\"0.2 0 0\" size=\"0.06\" contype=\"0\" "
    "conaffinity=\"0\"/>\n"
    "      <site name=\"a1\" pos=\"0.08 0.09 0.02\"/>\n"
    "      <site name=\"a2\" pos=\"0.33 -0.07 0.01\"/>\n"
    "      <site name=\"side_out\" pos=\"0.2 0.15 0.02\"/>\n"
    "      <site name=\"side_in\" pos=\"0.2 0.01 0\"/>\n"
    "      <body name=\"b2\" pos=\"0.4 0 0\">\n"
    "        <joint name=\"j2\" axis=\"0.2 1 0.3\"/>\n"
    "        <geom name=\"arm2\" type=\"capsule\" fromto=\"0 0 0 0 0 -0.3\" size=\"0.03\" "
    "contype=\"0\" conaffinity=\"0\"/>\n"
    "        <geom name=\"drum\" type=\"cylinder\" size=\"0.05 0.04\" euler=\"1.4 0.2 0\" "
    "contype=\"0\" conaffinity=\"0\"/>\n"
    "        <site name=\"a3\" pos=\"0.06 0.02 -0.15\"/>\n"
    "        <site name=\"a4\" pos=\"-0.07 0.01 -0.2\"/>\n"
    "        <site name=\"side_drum\" pos=\"0.1 0 0.02\"/>\n"
    "        <body name=\"b3\" pos=\"0 0 -0.3\">\n"
    "          <joint name=\"j3\" type=\"slide\" axis=\"0 0.3 1\"/>\n"
    "          <geom name=\"tip\" type=\"box\" size=\"0.03 0.03 0.03\" contype=\"0\" "
    "conaffinity=\"0\"/>\n"
    "          <site name=\"a5\" pos=\"0.02 0.03 0\"/>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <tendon>\n"
    "    <spatial name=\"sites\"><site site=\"w0\"/><site site=\"a1\"/><site site=\"a3\"/>"
    "<site site=\"a5\"/></spatial>\n"
    "    <spatial name=\"sphere\"><site site=\"w1\"/><geom geom=\"ball\"/><site site=\"a3\"/>"
    "</spatial>\n"
    "    <spatial name=\"sphere_side\"><site site=\"w2\"/><geom geom=\"ball\" "
    "sidesite=\"side_out\"/><site site=\"a4\"/></spatial>\n"
    "    <spatial name=\"sphere_inside\"><site site=\"w1\"/><geom geom=\"ball\" "
    "sidesite=\"side_in\"/><site site=\"a3\"/></spatial>\n"
    "    <spatial name=\"cylinder\"><site site=\"a1\"/><geom geom=\"drum\"/><site site=\"a4\"/>"
    "</spatial>\n"
    "    <spatial name=\"cylinder_side\"><site site=\"a2\"/><geom geom=\"drum\" "
    "sidesite=\"side_drum\"/><site site=\"a5\"/></spatial>\n"
    "    <spatial name=\"pulley\"><site site=\"w0\"/><site site=\"a3\"/><pulley divisor=\"2\"/>"
    "<site site=\"w1\"/><site site=\"a5\"/></spatial>\n"
    "    <fixed name=\"fixed\"><joint joint=\"j1\" coef=\"0.5\"/><joint joint=\"j3\" "
    "coef=\"-2\"/><joint joint=\"j2\" coef=\"0.25\"/></fixed>\n"
    "  </tendon>\n"
    "</mujoco>\n";

sim_model *tendon_scene_load(const char *xml, char *err, size_t err_sz) {
  char dir[128], path[256];
  ts_tmpdir(dir, sizeof dir, "tendon");
  snprintf(path, sizeof path, "%s/scene.xml", dir);
  ts_write_file(path, xml);
  sim_import_options o = {0, NULL, NULL};
  sim_model *m = sim_import_load_file(path, &o, err, err_sz);
  ts_rmtree(dir);
  return m;
}

/* Two hinges that gravity swings into the limits of a fixed tendon coupling them and of a cable
 * from the world through both links; both have springs, dampers and friction loss, a motor pulls
 * the cable and a position servo holds the coupling. */
const char tendon_scene_dynamics[] =
    "<mujoco model=\"tendon_dynamics\">\n"
    "  <compiler angle=\"radian\"/>\n"
    "  <option timestep=\"0.002\"><flag energy=\"enable\"/></option>\n"
    "  <worldbody>\n"
    "    <site name=\"anchor\" pos=\"0.1 0.05 0.25\"/>\n"
    "    <body name=\"b1\">\n"
    "      <joint name=\"j1\" axis=\"0 1 0\" damping=\"0.01\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.03\"/>\n"
    "      <site name=\"s1\" pos=\"0.2 0 0.03\"/>\n"
    "      <body name=\"b2\" pos=\"0.3 0 0\">\n"
    "        <joint name=\"j2\" axis=\"0 1 0\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.025\"/>\n"
    "        <site name=\"s2\" pos=\"0.2 0.01 0.02\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <tendon>\n"
    "    <fixed name=\"couple\" stiffness=\"2\" damping=\"0.3\" springlength=\"0.1\" "
    "limited=\"true\" range=\"-0.6 0.5\" frictionloss=\"0.05\">\n"
    "      <joint joint=\"j1\" coef=\"1\"/><joint joint=\"j2\" coef=\"-0.5\"/>\n"
    "    </fixed>\n"
    "    <spatial name=\"cable\" stiffness=\"20\" damping=\"0.5\" limited=\"true\" "
    "range=\"0.3 0.62\" margin=\"0.01\" solreflimit=\"0.01 1\" frictionloss=\"0.1\">\n"
    "      <site site=\"anchor\"/><site site=\"s1\"/><site site=\"s2\"/>\n"
    "    </spatial>\n"
    "  </tendon>\n"
    "  <actuator>\n"
    "    <motor name=\"pull\" tendon=\"cable\" gear=\"2\" ctrllimited=\"true\" "
    "ctrlrange=\"-5 5\"/>\n"
    "    <position name=\"hold\" tendon=\"couple\" kp=\"3\"/>\n"
    "    <velocity name=\"brake\" tendon=\"cable\" kv=\"0.2\"/>\n"
    "  </actuator>\n"
    "</mujoco>\n";
