/* hil/servo/ft_device.h: one Feetech STS3215 as its controller sees it: the SMS/STS memory table
 * (addresses, sizes, EEPROM/SRAM, as Feetech's STS memory table and its SCServo library list
 * them) and the answers to the protocol's instructions (PING, READ, WRITE, REG_WRITE, ACTION,
 * SYNC_READ, SYNC_WRITE).
 *
 * Rules kept: the EEPROM area (addresses 5-39) takes writes at any time, but keeps them across
 * a power cycle (REBOOT) only when they were written while Lock (55) was 0, as Feetech's memory
 * table says; read-only fields and addresses outside the table take none; a reply carries the servo's status byte
 * (hardware errors, 0 when none); the Status Return Level 0 answers only PING and READ; a
 * broadcast gets no reply. Multi-byte fields are little-endian; positions and speeds are
 * sign-magnitude with bit 15 as the sign (load: bit 10).
 *
 * Plain data: no allocation, no I/O.
 */
#ifndef ACHILLES_HIL_SERVO_FT_DEVICE_H
#define ACHILLES_HIL_SERVO_FT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hil/servo/feetech.h"

#define FT_TABLE_SIZE 71 /* addresses 0 .. 70 */
#define FT_MODEL_STS3215 777

enum {
  FT_FIRMWARE_MAJOR = 0,
  FT_FIRMWARE_MINOR = 1,
  FT_MODEL_NUMBER = 3,       /* 2, R */
  FT_ID = 5,
  FT_BAUD_RATE = 6,          /* 0 1M, 1 500k, 2 250k, 3 128k, 4 115200, 5 76800, 6 57600, 7 38400 */
  FT_RETURN_DELAY_TIME = 7,  /* 2 µs units */
  FT_STATUS_RETURN_LEVEL = 8,
  FT_MIN_POSITION_LIMIT = 9, /* 2 */
  FT_MAX_POSITION_LIMIT = 11,
  FT_MAX_TORQUE = 16,        /* 2, 0.1 %: copied into Torque Limit at power-on */
  FT_PHASE = 18,             /* bit 0 drive reverse, bit 4 every turn reported, bit 7 reading
                                reverse (modelled); others stored */
  FT_P_GAIN = 21,
  FT_D_GAIN = 22,
  FT_I_GAIN = 23,
  FT_OFFSET = 31,            /* 2, sign bit 11 */
  FT_OPERATING_MODE = 33,    /* 0 position, 1 constant speed, 2 PWM, 3 step */
  FT_SPEED_P_GAIN = 37,
  FT_SPEED_I_GAIN = 39,
  FT_EEPROM_END = 40,        /* the EEPROM area is [0, 40) */
  FT_TORQUE_ENABLE = 40,
  FT_ACCELERATION = 41,      /* 100 steps/s² units */
  FT_GOAL_POSITION = 42,     /* 2, sign bit 15 */
  FT_GOAL_TIME = 44,         /* 2: the PWM in mode 2 (0.1 %, sign bit 10) */
  FT_GOAL_SPEED = 46,        /* 2, steps/s, sign bit 15 */
  FT_TORQUE_LIMIT = 48,      /* 2, 0.1 % */
  FT_LOCK = 55,
  FT_PRESENT_POSITION = 56,  /* 2 */
  FT_PRESENT_SPEED = 58,     /* 2, steps/s, sign bit 15 */
  FT_PRESENT_LOAD = 60,      /* 2, 0.1 %, sign bit 10 */
  FT_PRESENT_VOLTAGE = 62,   /* 0.1 V */
  FT_PRESENT_TEMPERATURE = 63,
  FT_STATUS = 65,            /* hardware error bits */
  FT_MOVING = 66,
  FT_PRESENT_CURRENT = 69,   /* 2, 6.5 mA units */
};

#define FT_PHASE_DRIVE_REVERSE 0x01
#define FT_PHASE_MULTI_TURN 0x10
#define FT_PHASE_FEEDBACK_REVERSE 0x80

#define FT_TORQUE_CALIBRATE 128 /* Torque Enable = 128: the present position becomes 2048 */

/* Instructions beyond the SDK's (Feetech's protocol manual; models vary in which they take). */
#define FT_RESTORE 0x06   /* factory values for all but the ID; EEPROM unlocked only */
#define FT_REBOOT 0x08    /* no reply; RAM back at its defaults, EEPROM as saved */
#define FT_CALIBRATE 0x0B /* the present position becomes 2048, or the 2-byte target given */

typedef struct ft_device {
  int model;
  uint8_t mem[FT_TABLE_SIZE];
  uint8_t saved[FT_EEPROM_END]; /* the EEPROM area as it survives a power cycle */
  int registered;
  uint8_t reg_address, reg_length;
  uint8_t reg_data[FT_TABLE_SIZE];
  unsigned long writes_refused;
  unsigned long reboots; /* REBOOT and restores done: the servo's loop starts over */
} ft_device;

/* The factory state at an ID: 0, or -1 for an unknown model. */
int ft_device_init(ft_device *d, int model, uint8_t id);
uint8_t ft_device_id(const ft_device *d);
/* Bits per second of a Baud Rate value, -1 for others. */
long ft_baud_rate(uint8_t index);

/* Sign-magnitude fields: value of `size` bytes at address with the sign in bit `sign_bit`. */
int32_t ft_device_get_signed(const ft_device *d, uint8_t address, int sign_bit);
void ft_device_set_signed(ft_device *d, uint8_t address, int sign_bit, int32_t value);

/* A power cycle: the RAM area (40-70) back at its defaults, the EEPROM area as saved, Torque
 * Limit from Max Torque; what REBOOT does. */
void ft_device_power_cycle(ft_device *d);

/* Handles one packet (this ID or broadcast), writes the reply into out: its length, 0 when the
 * servo stays silent, -1 when out is too small. */
int ft_device_handle(ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz);

#endif
