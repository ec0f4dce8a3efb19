/* tests/sensors/fit/encoder_log.h: logs of known parameters for the noise-fit tests — the
 * project's own encoder model (sensors/) on a one-joint robot driven through a known
 * trajectory, every sample written with the log writer (hil/record/log.h). */
#ifndef ACHILLES_TESTS_SENSORS_FIT_ENCODER_LOG_H
#define ACHILLES_TESTS_SENSORS_FIT_ENCODER_LOG_H

/* the one-joint robot: a hinge "j" about y, 1 kHz, no gravity */
extern const char encoder_log_robot[];

/* Drives joint j through rest + amp·sin(2π·0.25·t) for `seconds` (the state is set directly,
 * as a fast run with a known trajectory) with the sensors of `sensors_json` (a sensors file's
 * text: its first sensor is recorded) and writes every sample to a log at path, flushed every
 * flush_every steps (0: only at the end). Fails the test on any error. */
void encoder_log_record(const char *path, const char *sensors_json, double seconds, double rest,
                        double amp, int flush_every);

#endif
