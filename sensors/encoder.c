/* sensors/encoder.c: joint encoder, incremental counts and absolute angle. The model and its
 * per-sample code live in encoder_internal.h, inlined into the set's sampling loop; these are
 * the out-of-line entry points of sensors.h. */
#include "sensors/sensors.h"

#include "sensors/encoder_internal.h"

void sens_encoder_truth(sens_sensor *s, const sim_model *m, const sim_data *d, double *truth) {
  (void)m;
  sens__encoder_truth(s, d, truth);
}

void sens_encoder_measure(sens_sensor *s, const double *truth, double *meas) {
  sens__encoder_measure(s, truth, meas);
}
