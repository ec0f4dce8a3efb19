/* sim/option_load.c: the model's options at the root of a robot description: timestep,
 * integrator, gravity, the constraint solver's settings: solver, cone, impratio, iterations,
 * tolerance, and the medium: viscosity, wind (docs/robot-format.md). */
#include "sim/load_internal.h"

#include <cjson/cJSON.h>
#include <math.h>

static int check_gravity(const sim_json_ctx *L, const double g[3]) {
  for (int i = 0; i < 3; i++) {
    if (fabs(g[i]) > SIM_JSON_GRAVITY_MAX) {
      char p[SIM_JSON_PATH_MAX];
      sim_json_path_index(p, "gravity", i);
      return sim_json_fail(L, p, "must be within +-%g m/s^2 (got %g)", SIM_JSON_GRAVITY_MAX, g[i]);
    }
  }
  return 0;
}

/* "solver" ("cg", the default, or "newton"), "cone" ("pyramidal", the default, or "elliptic")
 * and "impratio" (> 0, 1 by default) */
static int read_solver(const sim_json_ctx *L, const cJSON *root, sim_option *opt) {
  char solver[16] = "cg", cone[16] = "pyramidal";
  if (sim_json_read_string(L, root, "", "solver", solver, sizeof solver) ||
      sim_json_read_string(L, root, "", "cone", cone, sizeof cone) ||
      sim_json_read_number(L, root, "", "impratio", &opt->impratio, 0) ||
      sim_json_check_min(L, "", "impratio", opt->impratio, 0, 1)) {
    return -1;
  }
  const int s = sim_solver_parse(solver), c = sim_cone_parse(cone);
  if (s < 0) {
    return sim_json_fail(L, "solver", "expected \"cg\" or \"newton\" (got \"%s\")", solver);
  }
  if (c < 0) {
    return sim_json_fail(L, "cone", "expected \"pyramidal\" or \"elliptic\" (got \"%s\")", cone);
  }
  opt->solver = (sim_solver_type)s;
  opt->cone = (sim_cone)c;
  return 0;
}

int sim_options_parse(const sim_json_ctx *L, const cJSON *root, sim_option *opt) {
  opt->timestep = 0.002;
  opt->gravity[0] = 0, opt->gravity[1] = 0, opt->gravity[2] = -9.81;
  opt->integrator = SIM_INTEGRATOR_EULER;
  opt->midpoint_iterations = 4;
  opt->solver_iterations = 20;
  opt->solver_tolerance = 1e-8;
  opt->impratio = 1;
  double iterations = 4, solver_iterations = 20;
  if (sim_json_read_number(L, root, "", "timestep", &opt->timestep, 0) ||
      sim_json_check_min(L, "", "timestep", opt->timestep, SIM_JSON_TIMESTEP_MIN, 0) ||
      sim_json_check_max(L, "", "timestep", opt->timestep, SIM_JSON_TIMESTEP_MAX) ||
      sim_json_read_vector(L, root, "", "gravity", opt->gravity, 3, 0) ||
      check_gravity(L, opt->gravity) ||
      sim_json_read_number(L, root, "", "midpoint_iterations", &iterations, 0) ||
      sim_json_read_number(L, root, "", "solver_iterations", &solver_iterations, 0) ||
      sim_json_read_number(L, root, "", "solver_tolerance", &opt->solver_tolerance, 0) ||
      sim_json_check_min(L, "", "solver_tolerance", opt->solver_tolerance, 0, 0) ||
      sim_json_read_number(L, root, "", "viscosity", &opt->viscosity, 0) ||
      sim_json_check_min(L, "", "viscosity", opt->viscosity, 0, 0) ||
      sim_json_read_vector(L, root, "", "wind", opt->wind, 3, 0)) {
    return -1;
  }
  if (solver_iterations != floor(solver_iterations) || solver_iterations < 1 ||
      solver_iterations > 1000) {
    return sim_json_fail(L, "solver_iterations", "expected an integer from 1 to 1000 (got %g)",
                         solver_iterations);
  }
  opt->solver_iterations = (int)solver_iterations;
  if (iterations != floor(iterations) || iterations < 1 || iterations > 1000) {
    return sim_json_fail(L, "midpoint_iterations", "expected an integer from 1 to 1000 (got %g)",
                iterations);
  }
  opt->midpoint_iterations = (int)iterations;
  const cJSON *integ = cJSON_GetObjectItemCaseSensitive(root, "integrator");
  if (integ) {
    int k = cJSON_IsString(integ) ? sim_integrator_parse(integ->valuestring) : -1;
    if (k < 0) {
      return sim_json_fail(L, "integrator", "expected \"euler\", \"verlet\", \"midpoint\" or \"rk4\"");
    }
    opt->integrator = (sim_integrator)k;
  }
  return read_solver(L, root, opt);
}
