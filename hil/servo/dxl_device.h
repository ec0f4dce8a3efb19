/* hil/servo/dxl_device.h: one Dynamixel X-series servo as its controller sees it: the control
 * table (addresses, sizes, access, EEPROM/RAM, ranges from the ROBOTIS e-manual) and the answers
 * to Protocol 2.0 instructions, including the rules a real servo enforces (EEPROM writable only
 * with torque off, range and length errors, status return level, registered writes).
 *
 * The motor model and control loop that move "present" values are not here: a device is the
 * memory and the protocol; the bus (hil/servo) ties devices to simulated joints.
 *
 * Plain data: no allocation, no I/O.
 */
#ifndef ACHILLES_HIL_SERVO_DXL_DEVICE_H
#define ACHILLES_HIL_SERVO_DXL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hil/servo/dxl2.h"

#define DXL_TABLE_SIZE 147 /* bytes of the X-series control table (0 .. 146) */

/* Control-table addresses of the X series (e-manual, XL430-W250 / XM430-W350). */
enum {
  DXL_MODEL_NUMBER = 0,        /* 2, R */
  DXL_FIRMWARE_VERSION = 6,    /* 1, R */
  DXL_ID = 7,                  /* 1, RW, EEPROM */
  DXL_BAUD_RATE = 8,           /* 1, RW, EEPROM: 0 9600, 1 57600, 2 115200, 3 1M, 4 2M, ... */
  DXL_RETURN_DELAY_TIME = 9,   /* 1, RW, EEPROM: 2 µs units */
  DXL_DRIVE_MODE = 10,         /* 1, RW, EEPROM: bit 0 reverse (modelled) */
  DXL_OPERATING_MODE = 11,     /* 1, RW, EEPROM: 0 current, 1 velocity, 3 position,
                                  4 extended position, 5 current-based position, 16 PWM */
  DXL_HOMING_OFFSET = 20,      /* 4, RW, EEPROM */
  DXL_TEMPERATURE_LIMIT = 31,  /* 1, RW, EEPROM */
  DXL_PWM_LIMIT = 36,          /* 2, RW, EEPROM */
  DXL_CURRENT_LIMIT = 38,      /* 2, RW, EEPROM (current-capable models) */
  DXL_VELOCITY_LIMIT = 44,     /* 4, RW, EEPROM */
  DXL_MAX_POSITION_LIMIT = 48, /* 4, RW, EEPROM */
  DXL_MIN_POSITION_LIMIT = 52, /* 4, RW, EEPROM */
  DXL_TORQUE_ENABLE = 64,      /* 1, RW: the EEPROM area is locked while it is 1 */
  DXL_SHUTDOWN = 63,           /* 1, RW, EEPROM: hardware errors that turn torque off */
  DXL_LED = 65,
  DXL_STATUS_RETURN_LEVEL = 68, /* 1, RW: 0 ping only, 1 ping and read, 2 all */
  DXL_REGISTERED_INSTRUCTION = 69, /* 1, R */
  DXL_HARDWARE_ERROR_STATUS = 70,  /* 1, R: bit 5 overload (modelled), others never set */
  DXL_POSITION_D_GAIN = 80,
  DXL_POSITION_I_GAIN = 82,
  DXL_POSITION_P_GAIN = 84,
  DXL_GOAL_PWM = 100,
  DXL_GOAL_CURRENT = 102,
  DXL_GOAL_VELOCITY = 104,
  DXL_PROFILE_ACCELERATION = 108,
  DXL_PROFILE_VELOCITY = 112,
  DXL_GOAL_POSITION = 116,
  DXL_MOVING = 122,
  DXL_MOVING_STATUS = 123,
  DXL_PRESENT_PWM = 124,
  DXL_PRESENT_CURRENT = 126, /* Present Load on the XL430 */
  DXL_PRESENT_VELOCITY = 128,
  DXL_PRESENT_POSITION = 132,
  DXL_PRESENT_INPUT_VOLTAGE = 144,
  DXL_PRESENT_TEMPERATURE = 146,
};

#define DXL_DRIVE_REVERSE 0x01 /* Drive Mode bit 0: positions, speeds and torque reversed */

/* Operating modes (DXL_OPERATING_MODE). */
enum {
  DXL_MODE_CURRENT = 0,
  DXL_MODE_VELOCITY = 1,
  DXL_MODE_POSITION = 3,
  DXL_MODE_EXTENDED_POSITION = 4,
  DXL_MODE_CURRENT_POSITION = 5,
  DXL_MODE_PWM = 16,
};

typedef enum dxl_model {
  DXL_MODEL_XL430_W250 = 1060,
  DXL_MODEL_XM430_W350 = 1020,
} dxl_model;

typedef struct dxl_device {
  dxl_model model;
  uint8_t mem[DXL_TABLE_SIZE];
  /* a REG_WRITE waiting for ACTION */
  int registered;
  uint16_t reg_address, reg_length;
  uint8_t reg_data[DXL_TABLE_SIZE];
  unsigned long writes_refused; /* for the bus's statistics */
  unsigned long reboots;        /* REBOOT and FACTORY_RESET done: the servo's loop starts over */
} dxl_device;

/* Bits per second of a Baud Rate value (0 9600 ... 7 4.5 M), -1 for others. */
long dxl_baud_rate(uint8_t index);

/* The factory state of a model at an ID: every field at its documented default. 0, or -1 for an
 * unknown model. */
int dxl_device_init(dxl_device *d, dxl_model model, uint8_t id);

uint8_t dxl_device_id(const dxl_device *d);

/* Little-endian access to the table (the bus's control loop reads goals, writes presents). */
uint32_t dxl_device_get(const dxl_device *d, uint16_t address, int size);
void dxl_device_set(dxl_device *d, uint16_t address, int size, uint32_t value);

/* Handles one instruction addressed to this device (its ID or broadcast) and writes the status
 * packet to send into out: returns its length, 0 when the servo stays silent (broadcast, status
 * return level, not addressed), -1 when out is too small. SYNC and BULK instructions answer with
 * this device's part. REBOOT answers first, then resets the RAM area; FACTORY_RESET (torque off
 * only) answers with the old ID, then resets. Goals beyond the EEPROM's limits are refused with
 * the Data Limit error. */
int dxl_device_handle(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz);

#endif
