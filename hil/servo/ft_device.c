/* hil/servo/ft_device.c: the STS3215 memory table and the answers to instructions. */
#include "hil/servo/ft_device.h"

#include <string.h>

/* Factory values of the fields (address, size, value); the rest read 0. The firmware version
 * bytes are left 0: the simulator is no particular firmware. */
static const struct {
  uint8_t address, size;
  uint16_t value;
} defaults[] = {
    {FT_MODEL_NUMBER, 2, FT_MODEL_STS3215},
    {FT_ID, 1, 1},
    {FT_BAUD_RATE, 1, 0},
    {FT_RETURN_DELAY_TIME, 1, 0},
    {FT_STATUS_RETURN_LEVEL, 1, 1},
    {FT_MIN_POSITION_LIMIT, 2, 0},
    {FT_MAX_POSITION_LIMIT, 2, 4095},
    {13, 1, 70},  /* max temperature, °C */
    {14, 1, 80},  /* max input voltage, 0.1 V */
    {15, 1, 40},  /* min input voltage */
    {FT_MAX_TORQUE, 2, 1000},
    {FT_P_GAIN, 1, 32},
    {FT_D_GAIN, 1, 32},
    {FT_I_GAIN, 1, 0},
    {24, 2, 16},  /* minimum startup force */
    {26, 1, 1},   /* CW dead zone */
    {27, 1, 1},   /* CCW dead zone */
    {28, 2, 500}, /* protection current */
    {30, 1, 1},   /* angular resolution */
    {FT_OPERATING_MODE, 1, 0},
    {34, 1, 20},  /* protective torque */
    {35, 1, 200}, /* protection time */
    {36, 1, 80},  /* overload torque */
    {FT_SPEED_P_GAIN, 1, 10},
    {38, 1, 200}, /* over-current protection time */
    {FT_SPEED_I_GAIN, 1, 200},
    {FT_TORQUE_LIMIT, 2, 1000},
    {FT_LOCK, 1, 1},
    {FT_PRESENT_VOLTAGE, 1, 74},
    {FT_PRESENT_TEMPERATURE, 1, 30},
};

static void set_u(ft_device *d, uint8_t address, int size, uint32_t v) {
  for (int i = 0; i < size && address + i < FT_TABLE_SIZE; i++) {
    d->mem[address + i] = (uint8_t)(v >> (8 * i));
  }
}

/* every field starting in [from, to) back to its factory value */
static void set_defaults(ft_device *d, unsigned from, unsigned to) {
  memset(d->mem + from, 0, to - from);
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
    if (defaults[i].address >= from && defaults[i].address < to) {
      set_u(d, defaults[i].address, defaults[i].size, defaults[i].value);
    }
  }
}

int ft_device_init(ft_device *d, int model, uint8_t id) {
  if (model != FT_MODEL_STS3215) {
    return -1;
  }
  memset(d, 0, sizeof *d);
  d->model = model;
  set_defaults(d, 0, FT_TABLE_SIZE);
  d->mem[FT_ID] = id;
  memcpy(d->saved, d->mem, sizeof d->saved);
  return 0;
}

void ft_device_power_cycle(ft_device *d) {
  set_defaults(d, FT_EEPROM_END, FT_TABLE_SIZE);
  memcpy(d->mem, d->saved, sizeof d->saved);
  memcpy(d->mem + FT_TORQUE_LIMIT, d->mem + FT_MAX_TORQUE, 2);
  d->registered = 0;
  d->reboots++;
}

uint8_t ft_device_id(const ft_device *d) { return d->mem[FT_ID]; }

long ft_baud_rate(uint8_t index) {
  static const long rates[] = {1000000, 500000, 250000, 128000, 115200, 76800, 57600, 38400};
  return index < sizeof rates / sizeof rates[0] ? rates[index] : -1;
}

int32_t ft_device_get_signed(const ft_device *d, uint8_t address, int sign_bit) {
  const uint16_t u = (uint16_t)(d->mem[address] | (d->mem[address + 1] << 8));
  const int32_t magnitude = u & ((1u << sign_bit) - 1u);
  return (u >> sign_bit) & 1u ? -magnitude : magnitude;
}

void ft_device_set_signed(ft_device *d, uint8_t address, int sign_bit, int32_t value) {
  const uint32_t limit = (1u << sign_bit) - 1u;
  uint32_t magnitude = (uint32_t)(value < 0 ? -value : value);
  magnitude = magnitude > limit ? limit : magnitude;
  set_u(d, address, 2, magnitude | (value < 0 ? 1u << sign_bit : 0u));
}

/* Writable: the EEPROM's ID .. speed I gain, the SRAM's torque enable .. torque limit, and Lock
 * (the lock decides what an EEPROM write keeps, not whether it is taken). */
static int writable(unsigned address) {
  return (address >= FT_ID && address < FT_EEPROM_END) ||
         (address >= FT_TORQUE_ENABLE && address < FT_TORQUE_LIMIT + 2) || address == FT_LOCK;
}

/* 1 when every byte of [address, address + n) takes the write, and the ID and baud stay valid */
static int write_ok(unsigned address, const uint8_t *data, size_t n) {
  if (n == 0 || address + n > FT_TABLE_SIZE) {
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const unsigned a = address + (unsigned)i;
    if (!writable(a) || (a == FT_ID && data[i] > 253) || (a == FT_BAUD_RATE && data[i] > 7)) {
      return 0;
    }
  }
  return 1;
}

/* The EEPROM bytes of [address, address + n) are kept across a power cycle when unlocked. */
static void keep_eeprom(ft_device *d, unsigned address, size_t n) {
  for (unsigned a = address; a < address + n; a++) {
    if (a < FT_EEPROM_END && d->mem[FT_LOCK] == 0) {
      d->saved[a] = d->mem[a];
    }
  }
}

/* Offset (31) so that the present position reads `target`: Present = Actual − Offset. The
 * offset is an EEPROM field (kept when unlocked); torque goes off. */
static void calibrate(ft_device *d, int32_t target) {
  const unsigned o = d->mem[FT_OFFSET] | (d->mem[FT_OFFSET + 1] << 8);
  const int32_t offset = (int32_t)((o & 0x7FF) + ((o >> 12) & 1) * 2048) * ((o >> 11) & 1 ? -1 : 1);
  const int32_t actual = ft_device_get_signed(d, FT_PRESENT_POSITION, 15) + offset;
  int32_t v = actual - target;
  v = ((v + 4096 + 2048) % 4096) - 2048; /* one turn: the shortest offset, within ±2047 */
  const unsigned mag = (unsigned)(v < 0 ? -v : v);
  set_u(d, FT_OFFSET, 2, (mag & 0x7FF) | (v < 0 ? 0x800u : 0u));
  keep_eeprom(d, FT_OFFSET, 2);
  ft_device_set_signed(d, FT_PRESENT_POSITION, 15, target);
  d->mem[FT_TORQUE_ENABLE] = 0;
}

static void do_write(ft_device *d, unsigned address, const uint8_t *data, size_t n) {
  if (!write_ok(address, data, n)) {
    d->writes_refused++;
    return;
  }
  memcpy(d->mem + address, data, n);
  keep_eeprom(d, address, n);
  if (address <= FT_TORQUE_ENABLE && address + n > FT_TORQUE_ENABLE &&
      d->mem[FT_TORQUE_ENABLE] == FT_TORQUE_CALIBRATE) {
    calibrate(d, 2048);
  }
}

static int reply(const ft_device *d, const uint8_t *data, size_t n, uint8_t *out, size_t out_sz) {
  return ft_encode(out, out_sz, ft_device_id(d), d->mem[FT_STATUS], data, n);
}

/* Whether a reply goes out: never to a broadcast; level 0 answers only PING and READ. */
static int answers(const ft_device *d, const ft_packet *p) {
  if (p->id == FT_BROADCAST) {
    return 0;
  }
  return p->instruction == FT_READ || d->mem[FT_STATUS_RETURN_LEVEL] >= 1;
}

/* READ: address, length. Outside the table the servo stays silent. */
static int handle_read(const ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz) {
  if (!answers(d, p) || p->nparams != 2 || p->params[1] == 0 ||
      (size_t)p->params[0] + p->params[1] > FT_TABLE_SIZE) {
    return 0;
  }
  return reply(d, d->mem + p->params[0], p->params[1], out, out_sz);
}

static int handle_write(ft_device *d, const ft_packet *p, int registered, uint8_t *out,
                        size_t out_sz) {
  const int answer = answers(d, p);
  if (p->nparams < 2) {
    return 0;
  }
  const uint8_t address = p->params[0];
  const size_t n = p->nparams - 1u;
  if (registered && write_ok(address, p->params + 1, n)) {
    d->registered = 1, d->reg_address = address, d->reg_length = (uint8_t)n;
    memcpy(d->reg_data, p->params + 1, n);
  } else if (registered) {
    d->writes_refused++;
  } else {
    do_write(d, address, p->params + 1, n);
  }
  /* the reply carries the ID the packet addressed, also when the write changed it */
  return answer ? ft_encode(out, out_sz, p->id, d->mem[FT_STATUS], NULL, 0) : 0;
}

static int handle_action(ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz) {
  if (d->registered) {
    do_write(d, d->reg_address, d->reg_data, d->reg_length);
    d->registered = 0;
  }
  return answers(d, p) ? reply(d, NULL, 0, out, out_sz) : 0;
}

/* SYNC_WRITE: address, length, then (id, data[length]) per servo; no reply */
static int handle_sync_write(ft_device *d, const ft_packet *p) {
  if (p->nparams < 2 || p->params[1] == 0) {
    return 0;
  }
  const uint8_t address = p->params[0], n = p->params[1];
  for (size_t at = 2; at + 1u + n <= p->nparams; at += 1u + n) {
    if (p->params[at] == ft_device_id(d)) {
      do_write(d, address, p->params + at + 1, n);
    }
  }
  return 0;
}

/* SYNC_READ: address, length, then the IDs that answer in that order */
static int handle_sync_read(const ft_device *d, const ft_packet *p, uint8_t *out,
                            size_t out_sz) {
  if (p->nparams < 3 || p->params[1] == 0 ||
      (size_t)p->params[0] + p->params[1] > FT_TABLE_SIZE) {
    return 0;
  }
  for (size_t at = 2; at < p->nparams; at++) {
    if (p->params[at] == ft_device_id(d)) {
      return reply(d, d->mem + p->params[0], p->params[1], out, out_sz);
    }
  }
  return 0;
}

/* RESTORE: the factory values for everything but the ID, kept; refused while locked. */
static int handle_restore(ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz) {
  if (d->mem[FT_LOCK] == 0) {
    const uint8_t id = d->mem[FT_ID];
    set_defaults(d, 0, FT_TABLE_SIZE);
    d->mem[FT_ID] = id, d->mem[FT_LOCK] = 0;
    memcpy(d->saved, d->mem, sizeof d->saved);
    d->registered = 0;
    d->reboots++;
  } else {
    d->writes_refused++;
  }
  return answers(d, p) ? reply(d, NULL, 0, out, out_sz) : 0;
}

/* CALIBRATE: the present position becomes 2048, or the target of its two parameters. */
static int handle_calibrate(ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz) {
  if (p->nparams != 0 && p->nparams != 2) {
    return 0;
  }
  calibrate(d, p->nparams == 2 ? (p->params[0] | (p->params[1] << 8)) & 0xFFF : 2048);
  return answers(d, p) ? reply(d, NULL, 0, out, out_sz) : 0;
}

int ft_device_handle(ft_device *d, const ft_packet *p, uint8_t *out, size_t out_sz) {
  if (p->id != ft_device_id(d) && p->id != FT_BROADCAST) {
    return 0;
  }
  switch (p->instruction) {
  case FT_PING: /* a broadcast ping is answered: it is how a controller finds servos */
    return reply(d, NULL, 0, out, out_sz);
  case FT_READ:
    return handle_read(d, p, out, out_sz);
  case FT_WRITE:
    return handle_write(d, p, 0, out, out_sz);
  case FT_REG_WRITE:
    return handle_write(d, p, 1, out, out_sz);
  case FT_ACTION:
    return handle_action(d, p, out, out_sz);
  case FT_SYNC_WRITE:
    return handle_sync_write(d, p);
  case FT_SYNC_READ:
    return handle_sync_read(d, p, out, out_sz);
  case FT_RESTORE:
    return handle_restore(d, p, out, out_sz);
  case FT_REBOOT: /* no reply, even to its own ID */
    ft_device_power_cycle(d);
    return 0;
  case FT_CALIBRATE:
    return handle_calibrate(d, p, out, out_sz);
  default: /* an instruction the servo does not know: no answer */
    return 0;
  }
}
