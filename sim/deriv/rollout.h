/* sim/deriv/rollout.h: the gradient of a loss over a rollout of T steps, by the adjoint method
 * backwards through the steps, with checkpoints.
 *
 * The loss L = Σₜ₌₀^(T−1) lₜ(xₜ, uₜ) + l_T(x_T), with x₀ the state given, uₜ the commands of step t
 * and xₜ₊₁ = step(xₜ, uₜ, θ). Its gradient comes from the adjoint λₜ = ∂L/∂xₜ, run backwards:
 *   λ_T = ∂l_T/∂x_T,
 *   ∂L/∂uₜ = Bₜᵀ·λₜ₊₁ + ∂lₜ/∂uₜ,   ∂L/∂θ += Pₜᵀ·λₜ₊₁,   λₜ = Aₜᵀ·λₜ₊₁ + ∂lₜ/∂xₜ,
 * and ∂L/∂x₀ = λ₀ (Aₜ, Bₜ, Pₜ the step Jacobians of deriv.h at xₜ; x in the tangent layout there).
 *
 * Checkpoints. The forward pass keeps every k-th state (only the state: SIM_STATE_ARRAYS and the
 * time, which is what reproduces a step bit for bit); the backward pass restores each checkpoint
 * in turn, from the last, steps forward through its segment to recover the states between, then
 * differentiates the segment's steps backwards. k = 1 (the default, as the paper of the third
 * seed document chooses) keeps every state and recomputes nothing; larger k trade memory,
 * (T/k + k) states, for k − 1 recomputed steps per segment; k = ⌈√T⌉ (SIM_ROLLOUT_SQRT) is the
 * least memory. Because every step is recomputed from the same bits, the gradient is the same to
 * the last bit for every k, and with the pool's threads (each world its own rollout). Each
 * step the backward pass takes again must land on the forward pass's next state bit for bit, or
 * the gradient stops with SIM_DERIV_EREPLAY (the model or a state was changed between the
 * passes, or the loss wrote to its data).
 *
 * Ownership: sim_rollout_new allocates the checkpoints, a derivative workspace and a scratch
 * sim_data, sized for T steps; sim_rollout_free(&r) releases them (accepts NULL). The gradient
 * call allocates nothing. One rollout object serves one thread at a time.
 */
#ifndef ACHILLES_SIM_DERIV_ROLLOUT_H
#define ACHILLES_SIM_DERIV_ROLLOUT_H

#include "sim/deriv/deriv.h"

/* One term of the loss. Called in the backward pass for t = T, T−1, ..., 0 with d holding xₜ
 * (qpos, qvel, act, and for t < T the command uₜ in d->ctrl) and its kinematics (sim_kinematics:
 * xpos, site_xpos, ... are current). Returns lₜ; adds ∂lₜ/∂xₜ to grad_x (nx entries, the tangent
 * layout of deriv.h, zero on entry) and ∂lₜ/∂uₜ to grad_u (nu entries, zero on entry; NULL at
 * t = T). */
typedef double (*sim_loss_fn)(void *ctx, const sim_model *m, const sim_data *d, int t, int T,
                              double *grad_x, double *grad_u);

/* A ready loss: tracking reference positions, with effort and velocity penalties,
 *   lₜ = wq·|qₜ ⊖ refₜ|² + wv·|q̇ₜ|² + wu·|uₜ|²  (t < T),   l_T = wT·|q_T ⊖ ref_T|² + wv·|q̇_T|²,
 * ⊖ the tangent difference (sim_state_difference; a rotation's is its rotation vector, whose
 * squared length has gradient 2·φ). Pass a sim_tracking_loss as ctx. */
typedef struct sim_tracking_loss {
  const double *qpos_ref; /* [(T + 1)·nq] reference positions for t = 0..T; NULL: no term */
  double wq, wv, wu, wT;
} sim_tracking_loss;
double sim_loss_tracking(void *ctx, const sim_model *m, const sim_data *d, int t, int T,
                         double *grad_x, double *grad_u);

typedef struct sim_rollout sim_rollout;

#define SIM_ROLLOUT_SQRT 0 /* k = ⌈√T⌉ */

/* Room for rollouts of T >= 1 steps of m, checkpoints every k steps (k >= 1, or
 * SIM_ROLLOUT_SQRT), and gradients with respect to the np parameters listed. NULL with a message
 * on failure. */
sim_rollout *sim_rollout_new(const sim_model *m, const sim_param *params, int np, int T, int k,
                             char *err, size_t err_sz);
void sim_rollout_free(sim_rollout **r);
int sim_rollout_interval(const sim_rollout *r);
/* Bytes of states kept: the checkpoints, x_T, one segment and one to compare,
 * (⌈T/k⌉ + k + 2) states. */
size_t sim_rollout_state_bytes(const sim_rollout *r);
/* Bytes of one state (a checkpoint). */
size_t sim_rollout_checkpoint_bytes(const sim_rollout *r);

/* Runs T steps from the state in d with the commands ctrl[t·nu .. t·nu + nu − 1] (d ends at
 * x_T, as T calls of sim_step leave it), then the backward pass. Writes L to *loss (may be
 * NULL), ∂L/∂x₀ (nx) to grad_x0, ∂L/∂uₜ (T × nu, row t) to grad_ctrl and ∂L/∂θ (np) to
 * grad_param; any of them may be NULL. Returns SIM_DERIV_OK, or the status of a step that
 * could not be differentiated or did not replay (the gradients are then not all written). */
int sim_rollout_gradient(sim_rollout *r, sim_data *d, const double *ctrl, sim_loss_fn loss,
                         void *ctx, double *loss_out, double *grad_x0, double *grad_ctrl,
                         double *grad_param);

#endif
