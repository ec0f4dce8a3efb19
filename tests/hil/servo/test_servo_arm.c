/* tests/hil/servo/test_servo_arm.c: an imported URDF with a servos file, end to end over the
 * bus (configs/desk_arm.urdf, six joints, with configs/desk_arm.sts3215.servos.json or
 * configs/desk_arm.xl430.servos.json, hil/servo/servo_file.c): every joint's servo answers at
 * its ID with its model, and a step of every joint at once settles without oscillation: after
 * the move each position stays within a tick or two over 0.4 s, near its goal (the loops have
 * no integral gain at their factory settings, so gravity leaves the P-loop's offset), with the
 * current below the stall current. The servos bring their gearboxes (sim/servo_spec.h), which
 * is what keeps the light wrist and gripper from ringing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hil/servo/servo_file.h"
#include "servo_client.h"
#include "sim/json_read.h"

#define URDF ACHILLES_SOURCE_DIR "/configs/desk_arm.urdf"
#define NJ 6

typedef struct arm_kind {
  const char *servos;   /* the servos file */
  int dxl;              /* Protocol 2.0, else Feetech */
  unsigned model;       /* model number at address 0 / 3 */
  double goal_tol;      /* ticks from the goal once settled */
  double current_stall; /* the current register at the stall current (XL: load, 1000 = 100 %) */
} arm_kind;

/* positions of IDs 1..6 by one SYNC_READ */
static void read_positions(client *c, int dxl, int32_t *pos) {
  if (dxl) {
    const uint8_t sr[] = {132, 0, 4, 0, 1, 2, 3, 4, 5, 6};
    send_packet(c, 0xFE, 0x82, sr, sizeof sr);
  } else {
    const uint8_t sr[] = {56, 2, 1, 2, 3, 4, 5, 6};
    ft_send(c, 0xFE, 0x82, sr, sizeof sr);
  }
  for (int i = 0; i < NJ; i++) {
    const status s = dxl ? expect_status(c, (uint8_t)(i + 1), "SYNC_READ of positions")
                         : ft_expect(c, (uint8_t)(i + 1), "SYNC_READ of positions");
    pos[i] = dxl ? (int32_t)le(s.data, 4) : (int32_t)(le(s.data, 2) & 0x7FFF);
  }
}

/* one field of each of IDs 1..6 by SYNC_WRITE (size 1, 2 or 4 bytes) */
static void write_all(client *c, int dxl, uint16_t address, const int32_t *v, int size) {
  uint8_t p[4 + NJ * 5];
  size_t n = 0;
  p[n++] = (uint8_t)address;
  if (dxl) {
    p[n++] = (uint8_t)(address >> 8), p[n++] = (uint8_t)size, p[n++] = 0;
  } else {
    p[n++] = (uint8_t)size;
  }
  for (int i = 0; i < NJ; i++) {
    p[n++] = (uint8_t)(i + 1);
    for (int b = 0; b < size; b++) {
      p[n++] = (uint8_t)((uint32_t)v[i] >> (8 * b));
    }
  }
  if (dxl) {
    send_packet(c, 0xFE, 0x83, p, n);
  } else {
    ft_send(c, 0xFE, 0x83, p, n);
  }
}

static uint32_t read_one(client *c, int dxl, uint8_t id, uint16_t address, int size) {
  return dxl ? read_field(c, id, address, size) : ft_read(c, id, (uint8_t)address, (uint8_t)size);
}

static void arm_settles(const arm_kind *k) {
  char name[1200], err[1024];
  if (servo_file_pin(name, sizeof name, URDF, k->servos, err, sizeof err) != 0) {
    fail_msg("%s", err);
  }
  fixture f;
  start_with(&f, name, 1000000, 1);
  /* every joint's servo answers at its ID */
  for (uint8_t id = 1; id <= NJ; id++) {
    assert_int_equal(read_one(&f.c, k->dxl, id, k->dxl ? 0 : 3, 2), k->model);
  }
  const int32_t on[NJ] = {1, 1, 1, 1, 1, 1};
  write_all(&f.c, k->dxl, k->dxl ? 64 : 40, on, 1);
  int32_t start[NJ], goal[NJ], pos[NJ], lo[NJ], hi[NJ];
  const int32_t step[NJ] = {300, -250, 300, -250, 500, 400}; /* the gripper opens */
  read_positions(&f.c, k->dxl, start);
  for (int i = 0; i < NJ; i++) {
    goal[i] = start[i] + step[i];
    lo[i] = INT32_MAX, hi[i] = INT32_MIN;
  }
  write_all(&f.c, k->dxl, k->dxl ? 116 : 42, goal, k->dxl ? 4 : 2);
  const double t0 = ts_now();
  double overshoot[NJ] = {0};
  while (ts_now() < t0 + 2.0) { /* the move (under a second), then settling */
    read_positions(&f.c, k->dxl, pos);
    for (int i = 0; i < NJ; i++) {
      overshoot[i] = fmax(overshoot[i], (pos[i] - goal[i]) * (step[i] > 0 ? 1.0 : -1.0));
    }
    ts_sleep(0.01);
  }
  uint32_t current_max = 0;
  const double t1 = ts_now();
  while (ts_now() < t1 + 0.4) { /* settled: steady */
    read_positions(&f.c, k->dxl, pos);
    for (int i = 0; i < NJ; i++) {
      lo[i] = pos[i] < lo[i] ? pos[i] : lo[i];
      hi[i] = pos[i] > hi[i] ? pos[i] : hi[i];
      const uint32_t raw = read_one(&f.c, k->dxl, (uint8_t)(i + 1), k->dxl ? 126 : 69, 2);
      const uint32_t cur = k->dxl ? (uint32_t)abs((int16_t)raw) : raw & 0x7FFF;
      current_max = cur > current_max ? cur : current_max;
    }
    ts_sleep(0.01);
  }
  stop(&f);
  sim_json_unpin();
  printf("%s: after a step of every joint (ticks) ", k->servos + strlen(ACHILLES_SOURCE_DIR) + 1);
  for (int i = 0; i < NJ; i++) {
    printf("%s%d: overshoot %.0f, settled %d..%d from the goal", i ? "; " : "", i + 1,
           overshoot[i], lo[i] - goal[i], hi[i] - goal[i]);
  }
  printf("; current at most %u (stall %.0f)\n", current_max, k->current_stall);
  for (int i = 0; i < NJ; i++) {
    if (hi[i] - lo[i] > 2 || fabs(0.5 * (lo[i] + hi[i]) - goal[i]) > k->goal_tol) {
      fail_msg("joint %d (ID %d) did not settle: %d..%d, goal %d", i, i + 1, lo[i], hi[i],
               goal[i]);
    }
  }
  assert_true(current_max < k->current_stall);
}

static void test_sts3215_arm(void **state) {
  (void)state;
  const arm_kind k = {ACHILLES_SOURCE_DIR "/configs/desk_arm.sts3215.servos.json", 0, 777, 6,
                      2.7 / 6.5e-3};
  arm_settles(&k);
}

static void test_xl430_arm(void **state) {
  (void)state;
  const arm_kind k = {ACHILLES_SOURCE_DIR "/configs/desk_arm.xl430.servos.json", 1, 1060, 30,
                      1000};
  arm_settles(&k);
}

int main(void) {
  make_crc_table();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sts3215_arm),
      cmocka_unit_test(test_xl430_arm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
