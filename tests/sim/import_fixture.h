/* tests/sim/import_fixture.h: what the import suites share — robot files written into the suite
 * folder (ts_tmp_setup), MJCF and URDF texts more than one suite loads, and an import that
 * collects the reports a user would see.
 *
 * The MJCF files are written by hand to cover the subset docs/import.md lists (default classes
 * and childclass, euler and axisangle in degrees and radians, joints away from the body origin,
 * inertia from sphere, capsule (fromto), cylinder and box geoms, a massless frame body holding a
 * site, motor and position actuators); MuJoCo 2.2.2 compiles each independently in
 * test_import_mujoco, so the expected trajectories are its own. */
#ifndef ACHILLES_TESTS_SIM_IMPORT_FIXTURE_H
#define ACHILLES_TESTS_SIM_IMPORT_FIXTURE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim/import/import.h"

/* An arm with everything of the subset, angles in degrees (MJCF's default). */
extern const char arm_deg[];
/* The URDF twin's MJCF: the same arm written as MuJoCo would read the URDF. */
extern const char twin_mjcf[];
/* A planar root, a free body and a ball joint. */
extern const char multi_mjcf[];

/* path = the suite folder / name, holding text */
void write_file(char *path, size_t path_sz, const char *name, const char *text);
/* a 0.1 m cube as STL (ASCII, or binary) in the suite folder */
void write_cube_stl(const char *name);
void write_cube_stl_binary(const char *name);

/* the reports of an import, one a line */
typedef struct reports {
  char text[8192];
  int n;
} reports;

/* sim_import_load_file with the reports collected into r */
sim_model *import(const char *path, reports *r, int strict, char *err, size_t err_sz);
/* text written as name in the suite folder and imported (not strict), its reports into r; fails
 * the test with the importer's message when it does not load */
sim_model *import_text(const char *name, const char *text, reports *r);
/* the same, the file's path written into path */
sim_model *import_text_at(const char *name, const char *text, reports *r, char *path,
                          size_t path_sz);
/* text written as name in the suite folder is refused by the importer with a message holding
 * message (the test fails on a model or on another message) */
void import_refused(const char *name, const char *text, const char *message);
/* the JSON robot the importer makes of text written as name in the suite folder (the caller
 * deletes it); fails the test with the importer's message */
cJSON *json_of(const char *name, const char *text);
/* bodies[i] of such a robot */
const cJSON *body_of(const cJSON *json, int i);

#endif
