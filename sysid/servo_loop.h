/* sysid/servo_loop.h: smart servos driven by their Goal Position inside the fit's simulation
 * (docs/sysid.md section 10; not public).
 *
 * A series actuator named in sysid_options.servo takes its servo's Goal Position (rad) as input.
 * At every step of a window the servo's own firmware loop — hil/servo's dxl_servo_step, the code
 * the bus runs, on a control table at the model's defaults — turns goal and joint state into the
 * torque of the next step (the actuator's ctrl), and its derivative with respect to the state,
 * through the loop's own memory (the encoder's held output, the PID's previous error and
 * integral), rides along with the sensitivities:
 *   S⁺ = A·S + [0 | P] + B·∂τ/∂[x₀ | θ]
 * where ∂τ/∂[x₀ | θ] is the chain rule of the loop's smooth pieces through S (0 where a limit
 * clamps: the integral's, the PWM limit, the current limit).
 */
#ifndef ACHILLES_SYSID_SERVO_LOOP_H
#define ACHILLES_SYSID_SERVO_LOOP_H

#include "sysid/internal.h"

/* The loops of o.servo, checked against the series' actuators; 0 or -1 with a message. */
int sysid__servo_setup(sysid_problem *p, char *err, size_t err_sz);
void sysid__servo_free(sysid_problem *p);
/* 1 when series actuator a is driven through its servo's loop */
int sysid__servo_has(const sysid_problem *p, int a);
/* At a window's start (after its state and S are set, sample is holding the input): the loops
 * powered and torque on long ago, the encoder's play settled behind the joint's speed, the
 * previous error one step of that speed back, the integral 0. */
void sysid__servo_start(sysid_problem *p, int is, int jac);
/* A step of a window: the servos' goals (series inputs of sample is) through their loops into
 * d->ctrl; with jac, their torques' sensitivity rows. */
void sysid__servo_ctrl(sysid_problem *p, int is, int jac);
/* Series joint j's reading at the current state when it is a servo's Present Position: its
 * encoder's output (rad) into *q and, when dq is not NULL, its sensitivity row (nx + np) into
 * dq; returns 1, or 0 when the joint's reading is not a servo's (the joint's position then). */
int sysid__servo_reading(sysid_problem *p, int j, double *q, double *dq);
/* The step with the loops' feedback in the sensitivities (jac) or a plain step. */
int sysid__servo_step(sysid_problem *p, int jac);

#endif
