/* tests/hil/servo/servo_client.h: a servo bus controller written from the manuals (Dynamixel
 * Protocol 2.0 and Feetech SMS/STS), and the simulator under test (tests/hil/servo). */
#ifndef ACHILLES_TESTS_SERVO_CLIENT_H
#define ACHILLES_TESTS_SERVO_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "hil/runtime/runtime.h"
#include "hil/servo/servo_bus.h"
#include "hil/transport.h"
#include "support/runtime.h"
#include "support/wait.h"

#define REPLY_WAIT_S 2.0 /* a reply: generous (a loaded CI machine) */

double median(double *t, int n); /* sorts t */

/* --- Dynamixel Protocol 2.0, from the e-manual ------------------------------------------------ */

void make_crc_table(void); /* once, before manual_crc */
uint16_t manual_crc(const uint8_t *p, size_t n);
/* An instruction packet: header, ID, length, instruction, stuffed parameters, CRC. */
size_t build(uint8_t *out, uint8_t id, uint8_t inst, const uint8_t *params, size_t n);

typedef struct client {
  int fd;
  uint8_t buf[4096];
  size_t n;
} client;

typedef struct status {
  uint8_t id, error;
  uint8_t data[256];
  size_t ndata;
  size_t raw_len;
  uint8_t raw[300];
} status;

void client_open(client *c, const char *path);
void send_bytes(client *c, const uint8_t *p, size_t n);
void send_packet(client *c, uint8_t id, uint8_t inst, const uint8_t *params, size_t n);
/* Takes one status packet off the front of the buffer, if a whole one is there. */
int parse_status(client *c, status *s);
/* Waits for the next status packet; 0 when none came within wait_s. */
int receive(client *c, status *s, double wait_s);
/* The next status, from `id` (fails the test otherwise). */
status expect_status(client *c, uint8_t id, const char *what);
uint32_t le(const uint8_t *p, int n);
uint32_t read_field(client *c, uint8_t id, uint16_t address, int size);
/* one byte at address, from a servo whose status carries the alert bit */
uint32_t read_field_alert(client *c, uint8_t id, uint16_t address);
/* the status's error byte */
int write_field(client *c, uint8_t id, uint16_t address, uint32_t v, int size);

/* --- Feetech SMS/STS -------------------------------------------------------------------------- */

/* FF FF ID LEN INST PARAMS CHK, LEN = params + 2, CHK = ~(ID + LEN + INST + params) */
void ft_send(client *c, uint8_t id, uint8_t inst, const uint8_t *params, size_t n);
/* One reply (FF FF ID LEN ERR DATA CHK) off the buffer; 0 when none came within wait_s. */
int ft_receive(client *c, status *s, double wait_s);
status ft_expect(client *c, uint8_t id, const char *what);
uint32_t ft_read(client *c, uint8_t id, uint8_t address, uint8_t n);
void ft_write(client *c, uint8_t id, uint8_t address, uint32_t v, int size);

/* --- the simulator ---------------------------------------------------------------------------- */

typedef struct fixture {
  hil_runtime *rt;
  hil_transport *bus;
  ts_loop loop;
  int running;
  client c;
} fixture;

/* A runtime on config (realtime) with a servo bus at baud; with run, its loop on a thread,
 * returned once the servos' loops have stepped twice. */
void start_with(fixture *f, const char *config, long baud, int run);
void stop(fixture *f);
servo_bus_counters counters(const fixture *f);

#endif
