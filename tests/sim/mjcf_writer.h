/* tests/sim/mjcf_writer.h: an Achilles model as MuJoCo MJCF, for reference comparisons.
 *
 * Test and benchmark support only (MuJoCo is never a dependency of the library). The MJCF keeps
 * the dynamics identical:
 *  - one MuJoCo body per Achilles body, same nesting, `pos` and `quat` placement;
 *  - one joint at the body origin (hinge or slide, same axis, damping, armature, stiffness,
 *    springref, limited/range, solreflimit/solimplimit, frictionloss, solreffriction/
 *    solimpfriction, margin 0; a fixed joint writes no joint element; joint types added later,
 *    ball or free, are not written yet: extend write_joint with them);
 *  - `<inertial pos=com quat mass diaginertia>` and no geoms: the writer finds the principal
 *    axes itself to full precision (MuJoCo 2.2.2's own diagonalization of `fullinertia` is off
 *    by up to 1e-7 relative), and the compiler is told not to touch the inertia
 *    (inertiafromgeom, balanceinertia, boundmass, boundinertia, settotalmass);
 *  - geoms (plane, sphere, capsule, box) with friction, solref, solimp, contype, conaffinity,
 *    condim, margin 0, and the model's excluded body pairs as <contact><exclude>;
 *    contacts enabled only when the model has geoms;
 *  - angles in radians (springref of hinges), limits and friction loss enabled, energy enabled;
 *    the model's solver (CG or Newton), cone, impratio, solver_iterations and solver_tolerance,
 *    dense Jacobian;
 *  - actuators as MuJoCo general actuators with affine bias (motor, DC motor without
 *    inductance, position and velocity servos), in model order, ctrlrange and force limits
 *    included; a DC motor with inductance cannot be expressed and is left out (a comment);
 *  - tendons and muscles are not written (nor actuators on tendons): their comparisons load
 *    MJCF text on both sides (tendon_scenes.h, test_muscle.c);
 *  - timestep, gravity and integrator from `opt`. MuJoCo 2.2.2 has only Euler and RK4:
 *    Verlet and midpoint models are written with integrator="Euler" and an XML comment saying
 *    so; callers comparing trajectories set both integrators themselves.
 * Achilles' qpos0 is an initial value, not a reference configuration, so no joint `ref` is
 * written: MuJoCo's qpos0 is zero, and callers copy qpos across.
 */
#ifndef ACHILLES_TESTS_SIM_MJCF_WRITER_H
#define ACHILLES_TESTS_SIM_MJCF_WRITER_H

#include <stddef.h>

#include "sim/model.h"

/* Writes the MJCF of m into xml (always NUL-terminated when xml_sz > 0). Returns the length of
 * the text (like snprintf, without the NUL) or, when it did not fit, the negative length
 * needed: call again with a buffer of at least 1 - return value bytes. xml may be NULL when
 * xml_sz is 0. */
int mjcf_write(const sim_model *m, char *xml, size_t xml_sz);

/* Builds the MJCF of m and compiles it with MuJoCo's mj_loadXML through a virtual file system.
 * Returns the mjModel (caller frees it with mj_deleteModel) or NULL with a message in err.
 * Defined only when mjcf_writer.c is built with MuJoCo available. */
struct mjModel_;
struct mjModel_ *mjcf_load(const sim_model *m, char *err, size_t err_sz);

#endif
