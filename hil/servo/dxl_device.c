/* hil/servo/dxl_device.c: the X-series control table and the answers to instructions. */
#include "hil/servo/dxl_device.h"

#include <string.h>

#define XL (1u << 0) /* the field exists on the XL430-W250 */
#define XM (1u << 1) /* ... on the XM430-W350 */
#define RO 0
#define RW 1

typedef struct field {
  uint16_t address;
  uint8_t size;
  uint8_t writable;
  uint8_t eeprom;
  uint8_t models;
  int64_t min, max;
  int64_t default_xl, default_xm;
} field;

/* Ranges and defaults as the e-manual lists them (signed fields as signed). */
static const field fields[] = {
    {DXL_MODEL_NUMBER, 2, RO, 1, XL | XM, 0, 65535, 1060, 1020},
    {2, 4, RO, 1, XL | XM, 0, 0, 0, 0}, /* model information */
    {DXL_FIRMWARE_VERSION, 1, RO, 1, XL | XM, 0, 255, 46, 46},
    {DXL_ID, 1, RW, 1, XL | XM, 0, 252, 1, 1},
    {DXL_BAUD_RATE, 1, RW, 1, XL | XM, 0, 7, 1, 1},
    {DXL_RETURN_DELAY_TIME, 1, RW, 1, XL | XM, 0, 254, 250, 250},
    {DXL_DRIVE_MODE, 1, RW, 1, XL | XM, 0, 13, 0, 0},
    {DXL_OPERATING_MODE, 1, RW, 1, XL | XM, 0, 16, 3, 3},
    {12, 1, RW, 1, XL | XM, 0, 255, 255, 255}, /* secondary (shadow) ID */
    {13, 1, RW, 1, XL | XM, 1, 2, 2, 2},       /* protocol type */
    {DXL_HOMING_OFFSET, 4, RW, 1, XL | XM, -1044479, 1044479, 0, 0},
    {24, 4, RW, 1, XL | XM, 0, 1023, 10, 10}, /* moving threshold */
    {DXL_TEMPERATURE_LIMIT, 1, RW, 1, XL | XM, 0, 100, 72, 80},
    {32, 2, RW, 1, XL | XM, 60, 140, 140, 160}, /* max voltage limit */
    {34, 2, RW, 1, XL | XM, 60, 140, 60, 95},   /* min voltage limit */
    {DXL_PWM_LIMIT, 2, RW, 1, XL | XM, 0, 885, 885, 885},
    {DXL_CURRENT_LIMIT, 2, RW, 1, XM, 0, 1193, 0, 1193},
    {DXL_VELOCITY_LIMIT, 4, RW, 1, XL | XM, 0, 1023, 265, 200},
    {DXL_MAX_POSITION_LIMIT, 4, RW, 1, XL | XM, 0, 4095, 4095, 4095},
    {DXL_MIN_POSITION_LIMIT, 4, RW, 1, XL | XM, 0, 4095, 0, 0},
    {63, 1, RW, 1, XL | XM, 0, 255, 52, 52}, /* shutdown */
    {DXL_TORQUE_ENABLE, 1, RW, 0, XL | XM, 0, 1, 0, 0},
    {DXL_LED, 1, RW, 0, XL | XM, 0, 1, 0, 0},
    {DXL_STATUS_RETURN_LEVEL, 1, RW, 0, XL | XM, 0, 2, 2, 2},
    {DXL_REGISTERED_INSTRUCTION, 1, RO, 0, XL | XM, 0, 1, 0, 0},
    {DXL_HARDWARE_ERROR_STATUS, 1, RO, 0, XL | XM, 0, 255, 0, 0},
    {76, 2, RW, 0, XL | XM, 0, 16383, 1000, 1920}, /* velocity I gain */
    {78, 2, RW, 0, XL | XM, 0, 16383, 100, 100},   /* velocity P gain */
    {DXL_POSITION_D_GAIN, 2, RW, 0, XL | XM, 0, 16383, 4000, 0},
    {DXL_POSITION_I_GAIN, 2, RW, 0, XL | XM, 0, 16383, 0, 0},
    {DXL_POSITION_P_GAIN, 2, RW, 0, XL | XM, 0, 16383, 640, 800},
    {88, 2, RW, 0, XL | XM, 0, 16383, 0, 0}, /* feedforward 2nd gain */
    {90, 2, RW, 0, XL | XM, 0, 16383, 0, 0}, /* feedforward 1st gain */
    {98, 1, RW, 0, XL | XM, 1, 127, 0, 0},   /* bus watchdog (0 disables) */
    {DXL_GOAL_PWM, 2, RW, 0, XL | XM, -885, 885, 0, 0},
    {DXL_GOAL_CURRENT, 2, RW, 0, XM, -1193, 1193, 0, 0},
    {DXL_GOAL_VELOCITY, 4, RW, 0, XL | XM, -1023, 1023, 0, 0},
    {DXL_PROFILE_ACCELERATION, 4, RW, 0, XL | XM, 0, 32767, 0, 0},
    {DXL_PROFILE_VELOCITY, 4, RW, 0, XL | XM, 0, 32767, 0, 0},
    {DXL_GOAL_POSITION, 4, RW, 0, XL | XM, -1048575, 1048575, 0, 0},
    {120, 2, RO, 0, XL | XM, 0, 32767, 0, 0}, /* realtime tick */
    {DXL_MOVING, 1, RO, 0, XL | XM, 0, 1, 0, 0},
    {DXL_MOVING_STATUS, 1, RO, 0, XL | XM, 0, 255, 0, 0},
    {DXL_PRESENT_PWM, 2, RO, 0, XL | XM, -885, 885, 0, 0},
    {DXL_PRESENT_CURRENT, 2, RO, 0, XL | XM, -32768, 32767, 0, 0},
    {DXL_PRESENT_VELOCITY, 4, RO, 0, XL | XM, INT32_MIN, INT32_MAX, 0, 0},
    {DXL_PRESENT_POSITION, 4, RO, 0, XL | XM, INT32_MIN, INT32_MAX, 0, 0},
    {136, 4, RO, 0, XL | XM, INT32_MIN, INT32_MAX, 0, 0}, /* velocity trajectory */
    {140, 4, RO, 0, XL | XM, INT32_MIN, INT32_MAX, 0, 0}, /* position trajectory */
    {DXL_PRESENT_INPUT_VOLTAGE, 2, RO, 0, XL | XM, 0, 255, 120, 120},
    {DXL_PRESENT_TEMPERATURE, 1, RO, 0, XL | XM, 0, 100, 30, 30},
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static unsigned model_bit(dxl_model m) { return m == DXL_MODEL_XL430_W250 ? XL : XM; }

static const field *field_at(const dxl_device *d, uint16_t address) {
  for (size_t i = 0; i < NFIELDS; i++) {
    const field *f = &fields[i];
    if ((f->models & model_bit(d->model)) && address >= f->address &&
        address < f->address + f->size) {
      return f;
    }
  }
  return NULL;
}

uint32_t dxl_device_get(const dxl_device *d, uint16_t address, int size) {
  uint32_t v = 0;
  for (int i = 0; i < size && address + i < DXL_TABLE_SIZE; i++) {
    v |= (uint32_t)d->mem[address + i] << (8 * i);
  }
  return v;
}

void dxl_device_set(dxl_device *d, uint16_t address, int size, uint32_t value) {
  for (int i = 0; i < size && address + i < DXL_TABLE_SIZE; i++) {
    d->mem[address + i] = (uint8_t)(value >> (8 * i));
  }
}

/* every field starting in [from, to) back to its documented default */
static void set_defaults(dxl_device *d, uint16_t from, uint16_t to) {
  for (size_t i = 0; i < NFIELDS; i++) {
    const field *f = &fields[i];
    if ((f->models & model_bit(d->model)) && f->address >= from && f->address < to) {
      const int64_t v = d->model == DXL_MODEL_XL430_W250 ? f->default_xl : f->default_xm;
      dxl_device_set(d, f->address, f->size, (uint32_t)v);
    }
  }
}

int dxl_device_init(dxl_device *d, dxl_model model, uint8_t id) {
  if (model != DXL_MODEL_XL430_W250 && model != DXL_MODEL_XM430_W350) {
    return -1;
  }
  memset(d, 0, sizeof *d);
  d->model = model;
  set_defaults(d, 0, DXL_TABLE_SIZE);
  d->mem[DXL_ID] = id;
  return 0;
}

uint8_t dxl_device_id(const dxl_device *d) { return d->mem[DXL_ID]; }

static uint32_t little_endian(const uint8_t *p, int size) {
  uint32_t u = 0;
  for (int i = 0; i < size; i++) {
    u |= (uint32_t)p[i] << (8 * i);
  }
  return u;
}

/* a field's value as a signed number (sign-extended from its size) */
static int64_t signed_value(const uint8_t *p, int size) {
  const uint32_t u = little_endian(p, size);
  if (size == 4) {
    return (int32_t)u;
  }
  if (size == 2) {
    return (int16_t)u;
  }
  return (int64_t)u;
}

/* Goals beyond the limits the EEPROM sets (position limits in position mode, velocity, PWM,
 * current) are refused with the Data Limit error, as the e-manual lists for these fields. */
static int beyond_limit(const dxl_device *d, uint16_t address, int64_t value) {
  const int64_t magnitude = value < 0 ? -value : value;
  switch (address) {
  case DXL_GOAL_POSITION:
    return d->mem[DXL_OPERATING_MODE] == DXL_MODE_POSITION &&
           (value < (int32_t)dxl_device_get(d, DXL_MIN_POSITION_LIMIT, 4) ||
            value > (int32_t)dxl_device_get(d, DXL_MAX_POSITION_LIMIT, 4));
  case DXL_GOAL_VELOCITY:
    return magnitude > (int64_t)dxl_device_get(d, DXL_VELOCITY_LIMIT, 4);
  case DXL_GOAL_PWM:
    return magnitude > (int64_t)dxl_device_get(d, DXL_PWM_LIMIT, 2);
  case DXL_GOAL_CURRENT:
    return magnitude > (int64_t)dxl_device_get(d, DXL_CURRENT_LIMIT, 2);
  default:
    return 0;
  }
}

/* The error byte of a write of data at [address, address + n): 0 when the servo takes it. Every
 * field touched must be wholly covered, writable, unlocked (EEPROM needs torque off) and in its
 * range; addresses that hold no field are refused. */
static uint8_t check_write(const dxl_device *d, uint16_t address, const uint8_t *data, size_t n) {
  if (n == 0 || address + n > DXL_TABLE_SIZE) {
    return DXL2_ERR_DATA_LENGTH;
  }
  const int torque = d->mem[DXL_TORQUE_ENABLE] != 0;
  for (size_t at = 0; at < n;) {
    const field *f = field_at(d, (uint16_t)(address + at));
    if (!f || f->address != address + at || at + f->size > n) {
      return f ? DXL2_ERR_DATA_LENGTH : DXL2_ERR_ACCESS;
    }
    if (!f->writable || (f->eeprom && torque)) {
      return DXL2_ERR_ACCESS;
    }
    /* fields with a negative minimum are two's complement; the rest are unsigned */
    const int64_t value = f->min < 0 ? signed_value(data + at, f->size)
                                     : (int64_t)little_endian(data + at, f->size);
    if (value < f->min || value > f->max) {
      return DXL2_ERR_DATA_RANGE;
    }
    if (beyond_limit(d, f->address, value)) {
      return DXL2_ERR_DATA_LIMIT;
    }
    at += f->size;
  }
  return 0;
}

/* the error byte of a status: the instruction's error, with the alert bit while a hardware
 * error stands */
static uint8_t with_alert(const dxl_device *d, uint8_t error) {
  return (uint8_t)(error | (d->mem[DXL_HARDWARE_ERROR_STATUS] ? DXL2_ERR_ALERT : 0));
}

static int status(const dxl_device *d, uint8_t error, const uint8_t *data, size_t n, uint8_t *out,
                  size_t out_sz) {
  return dxl2_encode_status(out, out_sz, dxl_device_id(d), with_alert(d, error), data, n);
}

/* whether a reply to a non-ping instruction goes out (status return level, broadcast) */
static int answers(const dxl_device *d, const dxl2_packet *p) {
  const uint8_t level = d->mem[DXL_STATUS_RETURN_LEVEL];
  if (p->id == DXL2_BROADCAST) {
    return 0;
  }
  return p->instruction == DXL2_READ ? level >= 1 : level >= 2;
}

static int handle_read(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  if (!answers(d, p)) {
    return 0;
  }
  if (p->nparams != 4) {
    return status(d, DXL2_ERR_DATA_LENGTH, NULL, 0, out, out_sz);
  }
  const uint16_t address = dxl2_u16(p->params), n = dxl2_u16(p->params + 2);
  if (n == 0 || address + n > DXL_TABLE_SIZE) {
    return status(d, DXL2_ERR_DATA_LENGTH, NULL, 0, out, out_sz);
  }
  return status(d, DXL2_ERR_NONE, d->mem + address, n, out, out_sz);
}

static int handle_write(dxl_device *d, const dxl2_packet *p, int registered, uint8_t *out,
                        size_t out_sz) {
  const int reply = answers(d, p); /* as set before this write (it may change the level) */
  uint8_t error = p->nparams < 3 ? DXL2_ERR_DATA_LENGTH : 0;
  const uint16_t address = p->nparams >= 2 ? dxl2_u16(p->params) : 0;
  const size_t n = p->nparams >= 2 ? p->nparams - 2u : 0;
  if (!error) {
    error = check_write(d, address, p->params + 2, n);
  }
  if (!error && registered) {
    d->registered = 1;
    d->reg_address = address;
    d->reg_length = (uint16_t)n;
    memcpy(d->reg_data, p->params + 2, n);
    d->mem[DXL_REGISTERED_INSTRUCTION] = 1;
  } else if (!error) {
    memcpy(d->mem + address, p->params + 2, n);
  } else {
    d->writes_refused++;
  }
  /* the status carries the ID the packet addressed, also when the write changed it */
  return reply ? dxl2_encode_status(out, out_sz, p->id, with_alert(d, error), NULL, 0) : 0;
}

static int handle_action(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  uint8_t error = DXL2_ERR_NONE;
  if (!d->registered) {
    error = DXL2_ERR_INSTRUCTION; /* an ACTION with nothing registered */
  } else {
    /* the lock is checked again: torque may have been enabled since the REG_WRITE */
    error = check_write(d, d->reg_address, d->reg_data, d->reg_length);
    if (!error) {
      memcpy(d->mem + d->reg_address, d->reg_data, d->reg_length);
    }
    d->registered = 0;
    d->mem[DXL_REGISTERED_INSTRUCTION] = 0;
  }
  return answers(d, p) ? status(d, error, NULL, 0, out, out_sz) : 0;
}

/* SYNC_WRITE: address, length, then (id, data[length]) per servo; no reply */
static int handle_sync_write(dxl_device *d, const dxl2_packet *p) {
  if (p->nparams < 4) {
    return 0;
  }
  const uint16_t address = dxl2_u16(p->params), n = dxl2_u16(p->params + 2);
  for (size_t at = 4; n > 0 && at + 1 + n <= p->nparams; at += 1u + n) {
    if (p->params[at] == dxl_device_id(d)) {
      if (check_write(d, address, p->params + at + 1, n) == 0) {
        memcpy(d->mem + address, p->params + at + 1, n);
      } else {
        d->writes_refused++;
      }
    }
  }
  return 0;
}

/* SYNC_READ: address, length, then the ids that answer in that order (the bus orders them) */
static int handle_sync_read(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  if (p->nparams < 5) {
    return 0;
  }
  const uint16_t address = dxl2_u16(p->params), n = dxl2_u16(p->params + 2);
  for (size_t at = 4; at < p->nparams; at++) {
    if (p->params[at] == dxl_device_id(d)) {
      if (n == 0 || address + n > DXL_TABLE_SIZE) {
        return status(d, DXL2_ERR_DATA_LENGTH, NULL, 0, out, out_sz);
      }
      return status(d, DXL2_ERR_NONE, d->mem + address, n, out, out_sz);
    }
  }
  return 0;
}

/* BULK_READ: (id, address, length) per servo, each its own; the bus orders the answers */
static int handle_bulk_read(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  for (size_t at = 0; at + 5 <= p->nparams; at += 5) {
    if (p->params[at] == dxl_device_id(d)) {
      const uint16_t address = dxl2_u16(p->params + at + 1), n = dxl2_u16(p->params + at + 3);
      if (n == 0 || address + n > DXL_TABLE_SIZE) {
        return status(d, DXL2_ERR_DATA_LENGTH, NULL, 0, out, out_sz);
      }
      return status(d, DXL2_ERR_NONE, d->mem + address, n, out, out_sz);
    }
  }
  return 0;
}

/* BULK_WRITE: (id, address, length, data[length]) per servo; no reply */
static int handle_bulk_write(dxl_device *d, const dxl2_packet *p) {
  for (size_t at = 0; at + 5 <= p->nparams;) {
    const uint16_t address = dxl2_u16(p->params + at + 1), n = dxl2_u16(p->params + at + 3);
    if (n == 0 || at + 5 + n > p->nparams) {
      return 0; /* a group that does not fit: the rest of the packet cannot be trusted */
    }
    if (p->params[at] == dxl_device_id(d)) {
      if (check_write(d, address, p->params + at + 5, n) == 0) {
        memcpy(d->mem + address, p->params + at + 5, n);
      } else {
        d->writes_refused++;
      }
    }
    at += 5u + n;
  }
  return 0;
}

/* REBOOT: the status goes out first, then the RAM area (from Torque Enable on) is back at its
 * defaults; the EEPROM stays. */
static int handle_reboot(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  const int n = p->id == DXL2_BROADCAST ? 0 : status(d, DXL2_ERR_NONE, NULL, 0, out, out_sz);
  set_defaults(d, DXL_TORQUE_ENABLE, DXL_TABLE_SIZE);
  d->registered = 0;
  d->reboots++;
  return n;
}

/* FACTORY_RESET: 0xFF everything, 0x01 all but the ID, 0x02 all but the ID and baud rate.
 * Refused with the Access error while torque is on (the EEPROM is locked then). */
static int handle_factory_reset(dxl_device *d, const dxl2_packet *p, uint8_t *out,
                                size_t out_sz) {
  const uint8_t what = p->nparams == 1 ? p->params[0] : 0;
  uint8_t error = DXL2_ERR_NONE;
  if (what != 0xFF && what != 0x01 && what != 0x02) {
    error = p->nparams == 1 ? DXL2_ERR_DATA_RANGE : DXL2_ERR_DATA_LENGTH;
  } else if (d->mem[DXL_TORQUE_ENABLE]) {
    error = DXL2_ERR_ACCESS;
  }
  const int n = answers(d, p) ? status(d, error, NULL, 0, out, out_sz) : 0;
  if (!error) {
    const uint8_t id = d->mem[DXL_ID], baud = d->mem[DXL_BAUD_RATE];
    set_defaults(d, 0, DXL_TABLE_SIZE);
    d->mem[DXL_ID] = what == 0xFF ? 1 : id;
    d->mem[DXL_BAUD_RATE] = what == 0x02 ? baud : d->mem[DXL_BAUD_RATE];
    d->registered = 0;
    d->reboots++;
  }
  return n;
}

long dxl_baud_rate(uint8_t index) {
  static const long rates[] = {9600, 57600, 115200, 1000000, 2000000, 3000000, 4000000, 4500000};
  return index < sizeof rates / sizeof rates[0] ? rates[index] : -1;
}

int dxl_device_handle(dxl_device *d, const dxl2_packet *p, uint8_t *out, size_t out_sz) {
  if (p->id != dxl_device_id(d) && p->id != DXL2_BROADCAST) {
    return 0;
  }
  switch (p->instruction) {
  case DXL2_PING: { /* answered at every status return level, broadcast included */
    uint8_t data[3] = {(uint8_t)(d->model & 0xFF), (uint8_t)(d->model >> 8),
                       d->mem[DXL_FIRMWARE_VERSION]};
    return status(d, DXL2_ERR_NONE, data, 3, out, out_sz);
  }
  case DXL2_READ:
    return handle_read(d, p, out, out_sz);
  case DXL2_WRITE:
    return handle_write(d, p, 0, out, out_sz);
  case DXL2_REG_WRITE:
    return handle_write(d, p, 1, out, out_sz);
  case DXL2_ACTION:
    return handle_action(d, p, out, out_sz);
  case DXL2_SYNC_WRITE:
    return handle_sync_write(d, p);
  case DXL2_SYNC_READ:
    return handle_sync_read(d, p, out, out_sz);
  case DXL2_BULK_READ:
    return handle_bulk_read(d, p, out, out_sz);
  case DXL2_BULK_WRITE:
    return handle_bulk_write(d, p);
  case DXL2_REBOOT:
    return handle_reboot(d, p, out, out_sz);
  case DXL2_FACTORY_RESET:
    return handle_factory_reset(d, p, out, out_sz);
  default:
    return answers(d, p) ? status(d, DXL2_ERR_INSTRUCTION, NULL, 0, out, out_sz) : 0;
  }
}
