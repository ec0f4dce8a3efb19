/* tests/fuzz/make_seeds.c: writes the binary and JSON-message seed corpora of the fuzz targets
 * into DIR/<target>/ (valid frames made by the client library's encoders, so they follow the
 * protocol as it is; the file-based corpora are copied by tests/fuzz/run.sh).
 *   make_seeds DIR */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "achilles_client.h"

static const char *root;

static void put(const char *target, const char *name, const void *data, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, target);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    perror(path);
  }
}

/* frames of `msgs` one after another, as one seed */
static void put_frames(const char *target, const char *name, const ach_message *msgs, int n) {
  static uint8_t buf[8 * ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  size_t len = 0;
  for (int i = 0; i < n && len + ACH_ENCODED_MAX(ACH_MAX_FRAME) <= sizeof buf; i++) {
    const int k = ach_encode(buf + len, ACH_ENCODED_MAX(ACH_MAX_FRAME), (uint16_t)i, &msgs[i]);
    if (k > 0) {
      len += (size_t)k;
    }
  }
  put(target, name, buf, len);
}

static ach_message hello(void) {
  ach_message m = {.type = ACH_MSG_HELLO,
                   .u.hello = {.version_major = ACH_PROTOCOL_VERSION_MAJOR,
                               .version_minor = ACH_PROTOCOL_VERSION_MINOR,
                               .flags = ACH_HELLO_LOCKSTEP,
                               .rx_max_payload = ACH_MAX_PAYLOAD,
                               .name = "fuzzboard"}};
  return m;
}

static void board_frames(void) {
  ach_message m[5];
  memset(m, 0, sizeof m);
  m[0] = hello();
  m[1].type = ACH_MSG_MOTOR_COMMAND;
  m[1].u.motor_command.board_time_us = 1000;
  m[1].u.motor_command.count = 4;
  for (int j = 0; j < 4; j++) {
    m[1].u.motor_command.joints[j].joint_id = (uint8_t)j;
    m[1].u.motor_command.joints[j].mode = (uint8_t)(j == 1 ? ACH_MODE_DUTY : j == 2 ? ACH_MODE_POSITION : ACH_MODE_TORQUE);
    m[1].u.motor_command.joints[j].value = 0.25f * (float)j;
  }
  m[2].type = ACH_MSG_HEARTBEAT;
  m[2].u.heartbeat.time_ns = 123456789;
  m[3].type = ACH_MSG_STEP_REQUEST;
  m[3].u.step_request.steps = 3;
  m[4].type = ACH_MSG_ERROR;
  ach_error_set(&m[4].u.error, ACH_ERRC_INTERNAL, 1, "board fault");
  put_frames("serial_rx", "hello", m, 1);
  put_frames("serial_rx", "session", m, 5);
  put_frames("serial_rx", "command_only", m + 1, 1);
}

static void simulator_frames(void) {
  ach_message m[4];
  memset(m, 0, sizeof m);
  m[0].type = ACH_MSG_HELLO_ACK;
  m[0].u.hello_ack.version_major = ACH_PROTOCOL_VERSION_MAJOR;
  m[0].u.hello_ack.n_joints = 4;
  m[0].u.hello_ack.n_sensors = 6;
  m[0].u.hello_ack.physics_rate_hz = 1000;
  m[1].type = ACH_MSG_SENSOR_SAMPLES;
  m[1].u.sensor_samples.sim_time_ns = 1000000;
  m[1].u.sensor_samples.count = 3;
  for (int i = 0; i < 3; i++) {
    ach_sample *s = &m[1].u.sensor_samples.samples[i];
    s->sensor_id = (uint8_t)i;
    s->kind = (uint8_t)(i == 0 ? ACH_KIND_COUNTS : ACH_KIND_VALUE);
    s->sample_seq = 7;
    s->v.raw = 0x3f800000u;
  }
  m[2].type = ACH_MSG_STATUS;
  m[2].u.status.state = ACH_STATE_RUNNING | ACH_STATE_CONNECTED;
  m[3].type = ACH_MSG_ERROR;
  ach_error_set(&m[3].u.error, ACH_ERRC_BAD_JOINT, 3, "joint 9: no such actuator (4)");
  put_frames("client_decoder", "session", m, 4);
  put_frames("client_decoder", "samples", m + 1, 1);
}

/* the first byte picks the path of fuzz_zmq_messages: 0 commands, 1 control, 2 sample */
static void zmq_messages(void) {
  static const char *const msgs[] = {
      "\x00{\"v\":1,\"t\":0.0031,\"commands\":{\"base_motor\":0.1,\"shoulder_motor\":0.2,"
      "\"elbow_servo\":0.5,\"wrist_motor\":0.0}}",
      "\x00{\"commands\":{\"base_motor\":null,\"nope\":1e999}}",
      "\x01{\"cmd\":\"hello\"}", "\x01{\"cmd\":\"status\"}", "\x01{\"cmd\":\"latest\"}",
      "\x01{\"cmd\":\"pause\"}", "\x01{\"cmd\":\"step\",\"n\":3}", "\x01{\"cmd\":\"reset\"}",
      "\x01{\"cmd\":\"snapshot_save\"}", "\x01{\"cmd\":\"snapshot_restore\"}",
      "\x01{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\"}",
      "\x01{\"cmd\":\"get_param\",\"sensor\":\"enc_shoulder\",\"path\":\"noise.white.sigma\"}",
      "\x01{\"cmd\":\"set_param\",\"sensor\":\"enc_shoulder\",\"path\":\"noise.white.sigma\","
      "\"value\":0.01}",
      "\x01{\"cmd\":\"fault\",\"sensor\":\"imu_wrist\",\"mode\":\"stuck\",\"group\":\"gyro\"}",
      "\x02{\"v\":1,\"sensor\":\"enc_shoulder\",\"type\":\"encoder\",\"truth\":false,\"seq\":1,"
      "\"t\":0.001,\"t_truth\":0,\"valid\":true,\"values\":{\"counts\":5,\"angle\":0.0019,"
      "\"velocity\":0},\"units\":{\"counts\":\"count\",\"angle\":\"rad\",\"velocity\":\"rad/s\"}}",
  };
  for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
    char name[16];
    snprintf(name, sizeof name, "msg%02zu", i);
    put("zmq_messages", name, msgs[i], 1 + strlen(msgs[i] + 1));
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  root = argv[1];
  mkdir(root, 0755);
  board_frames();
  simulator_frames();
  zmq_messages();
  return 0;
}
