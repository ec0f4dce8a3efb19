/* hil/client/examples/pd_firmware.c: example firmware built for the host — a PD position
 * controller for the arm's joints, speaking the Achilles serial protocol.
 *
 * It uses nothing but the client library (hil/client) and POSIX terminal calls, the way a board's
 * firmware would use its UART driver; compiled for the host it opens the pseudo-terminal the
 * simulator prints ("serial: firmware should open /dev/pts/N"), or a real serial port.
 *
 *   pd_firmware /dev/pts/3 --setpoint 1=0.5 --setpoint 2=-0.4
 *
 * Every SENSOR_SAMPLES frame carrying an encoder entry of a controlled joint triggers one
 * MOTOR_COMMAND for all joints: duty = kp·(setpoint − angle) − kd·velocity, clamped to ±limit,
 * where angle = counts·2π/cpr and velocity is the filtered difference of consecutive angles over
 * their measurement times (frame time − age). Joints without a setpoint hold angle 0.
 *
 * Homing (--home J=CMD): a joint whose encoder is incremental (it reads 0 at power-up wherever the
 * joint stands) is first driven with the constant command CMD until its encoder's index channel
 * reads 1; the count of that sample becomes the joint's zero, and the PD loop then holds the set
 * point measured from the index mark. Until then set points count from the power-up position.
 * Homing on a hard stop (--home-stop J=CMD, with --stop-angle J=RAD): the joint is driven with
 * CMD until it stands still against its mechanical stop (|velocity| below 0.02 rad/s for 0.1 s,
 * after 0.2 s of homing), and that position becomes the stop's known angle.
 *
 * Set points from standard input (--stdin): lines "setpoint J=RAD" (also kp, kd, with the
 * options' syntax) change the controller while it runs; a test scenario (docs/testing-firmware.md)
 * writes them at simulated times. Standard input is read before the port whenever both have
 * something, so that in lockstep a line written before a step acts on that step's samples.
 *
 * Excitation (--chirp J=AMP): joint J's set point sweeps as a chirp around its --setpoint,
 * AMP·sin(2π·(f0·τ + (f1 − f0)·τ²/(2T))) with τ the simulation time modulo T, from f0 to f1 Hz
 * in T seconds and again (--chirp-band F0:F1, default 0.2:3; --chirp-period T, default 10): a
 * log that moves every joint over a band of frequencies, for `achilles sysid` (docs/sysid.md).
 *
 * Planted bugs (--planted-bug NAME), for the shipped scenarios' failing twins (configs/scenarios):
 * wrong-sign (the position error taken the wrong way round: the arm is pushed away from its set
 * point), no-feed (a command goes out at most every 0.15 s of simulation time, as
 * if the firmware believed the watchdog's timeout were longer; other frames get a STEP_REQUEST,
 * so the simulator's 0.1 s watchdog starves between them), stop-sign (homing on a stop takes the stop's angle with the wrong sign).
 *
 * Defaults fit the club arm (configs/club_arm.json): its encoder counts at sensor ids 0, 4, 7,
 * 10 with 8192, 16384, 16384 and 4096 counts per turn (configs/club_arm.sensors.json), its DC
 * motors with duty input (stall torque per unit duty 4.0, 12.6, 5.0 and 0.96 N·m), and gains
 * kp = 20, 20, 20, 2 per rad, kd = 0.3, 0.3, 0.3, 0.01 per rad/s (the wrist's inertia is a
 * hundred times smaller). docs/serial-transport.md tells how to find the ids of another robot.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "achilles_client.h"

#define MAX_J 16
#define PI 3.14159265358979323846

typedef struct joint {
  double setpoint; /* rad */
  double chirp;    /* --chirp: amplitude of the swept set point, rad (0: none) */
  double kp, kd;   /* command per rad, command per rad/s */
  int encoder;     /* sensor id of the joint's counts channel, -1: none */
  double cpr;      /* counts per revolution of that counter */
  int index;       /* sensor id of the same encoder's index channel, -1: none */
  int index_given; /* --index set: DESCRIBE does not change it */
  double home_cmd; /* command while homing (0: this joint does not home) */
  int homing;      /* 1: until the index mark is seen; 2: until the joint stands at its stop */
  double stop_angle; /* --stop-angle: the joint angle of the stop it homes against, rad */
  double home_t0, still_since; /* homing on a stop: when it began, when the joint last moved */
  int32_t counts;  /* last good reading */
  int32_t zero;    /* counts at the index mark once homed, else 0 */
  int given;       /* encoder or cpr set on the command line: DESCRIBE does not change them */
  /* state */
  int have;     /* a reading arrived */
  double q, v;  /* angle (rad) and filtered velocity (rad/s) */
  double qmin, qmax; /* range of q over the run (the exit line prints it) */
  double t;     /* measurement time of q, s */
  uint32_t seq; /* sample_seq of q */
} joint;

enum { BUG_NONE = 0, BUG_WRONG_SIGN, BUG_NO_FEED, BUG_STOP_SIGN };

typedef struct firmware {
  const char *port;
  int use_stdin;     /* --stdin: commands from standard input */
  char line[256];    /* a partial line from standard input */
  size_t line_len;
  int bug;           /* --planted-bug */
  double sent_at;    /* simulation time of the last command sent (no-feed) */
  int have_sent;
  const char *name;
  int fd;
  int mode;          /* ach_motor_mode sent with every command */
  double limit;      /* |command| clamp */
  double cutoff_hz;  /* velocity filter */
  double duration_s; /* stop after this much simulation time, 0: never */
  double chirp_f0, chirp_f1, chirp_period; /* --chirp-band, --chirp-period */
  int verbose;
  int n; /* joints commanded (n_joints from HELLO_ACK) */
  joint j[MAX_J];
  ach_decoder dec;
  uint16_t seq;
  int connected;
  double sim_time, next_print;
  unsigned long frames, commands;
  double u[MAX_J];
} firmware;

static const char usage[] =
    "usage: pd_firmware PORT [options]\n"
    "PD position control of the arm over the Achilles serial protocol. PORT is the path the\n"
    "simulator printed (a pseudo-terminal) or a serial device.\n"
    "  --setpoint J=RAD   target angle of joint J (repeatable; others hold 0)\n"
    "  --chirp J=AMP      sweep joint J's set point: AMP rad around it, a chirp (repeatable)\n"
    "  --chirp-band F0:F1 the chirp's frequencies, Hz (default 0.2:3)\n"
    "  --chirp-period T   seconds of one sweep from F0 to F1, then again (default 10)\n"
    "  --kp K | J=K       proportional gain, command per rad (defaults: 20 20 20 2)\n"
    "  --kd K | J=K       derivative gain, command per rad/s (defaults: 0.3 0.3 0.3 0.01)\n"
    "  --encoder J=ID     sensor id of joint J's encoder counts (defaults: 0=0 1=4 2=7 3=10,\n"
    "                     then what DESCRIBE reports for the joint)\n"
    "  --cpr N | J=N      counts per revolution (defaults: 8192 16384 16384 4096, then\n"
    "                     what DESCRIBE reports)\n"
    "  --home J=CMD       home joint J first: command CMD until its index pulse, then\n"
    "                     count set points from the index mark (repeatable)\n"
    "  --home-stop J=CMD  home joint J against its hard stop: command CMD until it stands\n"
    "                     still, then that position is --stop-angle (repeatable)\n"
    "  --stop-angle J=RAD the joint angle of that stop (default 0)\n"
    "  --index J=ID       sensor id of joint J's index channel (default: 0=3, then what\n"
    "                     DESCRIBE reports)\n"
    "  --mode NAME        duty (default), torque, voltage, position or velocity\n"
    "  --limit X          clamp of the command (default 1, a full duty cycle)\n"
    "  --cutoff HZ        velocity filter cutoff (default 50)\n"
    "  --duration S       exit after S seconds of simulation time (default: run until closed)\n"
    "  --name NAME        board name sent in HELLO (default pd_firmware)\n"
    "  --quiet            no status line per second of simulation time\n"
    "  --stdin            read lines \"setpoint J=RAD\" (also kp, kd) from standard input\n"
    "  --planted-bug B    wrong-sign | no-feed | stop-sign: a deliberate bug, for tests that\n"
    "                     must fail (see the source's header)\n"
    "  --help             this text\n";

/* --- the serial port: POSIX termios, raw 8N1 -------------------------------------------------- */

static int open_port(const char *path) {
  int fd = open(path, O_RDWR | O_NOCTTY);
  if (fd < 0) {
    return -1;
  }
  struct termios tio;
  if (tcgetattr(fd, &tio) == 0) {
    /* raw: what cfmakeraw does, spelled out because it is not POSIX */
    tio.c_iflag &= (tcflag_t) ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    tio.c_oflag &= (tcflag_t)~OPOST;
    tio.c_lflag &= (tcflag_t) ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    tio.c_cflag &= (tcflag_t) ~(CSIZE | PARENB);
    tio.c_cflag |= CS8 | CLOCAL | CREAD;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    tcsetattr(fd, TCSANOW, &tio);
    tcflush(fd, TCIOFLUSH); /* nothing from before we opened it is for us */
  }
  return fd;
}

/* Set when a write fails because the simulator closed its end (EIO on a pty whose master is
 * gone, EPIPE on a pipe): at the end of a run the simulator may close the port while the answer
 * to its last samples is on its way, which is the same end as a read of 0 bytes, not an error. */
static int peer_gone;

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) {
      continue;
    }
    if (put <= 0) {
      peer_gone = put < 0 && (errno == EIO || errno == EPIPE || errno == ENXIO);
      return -1;
    }
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

static int send_message(firmware *f, const ach_message *m) {
  uint8_t frame[ACH_ENCODED_MAX(ACH_MAX_FRAME)];
  int n = ach_encode(frame, sizeof frame, f->seq++, m);
  return n > 0 ? write_all(f->fd, frame, (size_t)n) : -1;
}

static int send_hello(firmware *f) {
  const uint8_t flush = 0x00; /* ends whatever partial frame the simulator holds */
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_HELLO;
  m.u.hello.version_major = ACH_PROTOCOL_VERSION_MAJOR;
  m.u.hello.version_minor = ACH_PROTOCOL_VERSION_MINOR;
  m.u.hello.rx_max_payload = ACH_MAX_PAYLOAD;
  strncpy(m.u.hello.name, f->name, ACH_NAME_LEN);
  return write_all(f->fd, &flush, 1) || send_message(f, &m);
}

/* --- control ---------------------------------------------------------------------------------- */

/* the chirp's share of joint j's set point at the current simulation time */
static double chirp_offset(const firmware *f, const joint *j) {
  if (j->chirp == 0) {
    return 0;
  }
  const double T = f->chirp_period, tau = fmod(f->sim_time, T);
  return j->chirp * sin(2 * PI * (f->chirp_f0 * tau + (f->chirp_f1 - f->chirp_f0) * tau * tau / (2 * T)));
}

static int send_command(firmware *f) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_MOTOR_COMMAND;
  m.u.motor_command.board_time_us = (uint32_t)(f->sim_time * 1e6);
  for (int i = 0; i < f->n; i++) {
    joint *j = &f->j[i];
    double u = 0;
    if (j->homing) {
      u = j->home_cmd;
    } else if (j->have) {
      const double target = j->setpoint + chirp_offset(f, j);
      const double e = f->bug == BUG_WRONG_SIGN ? j->q - target : target - j->q;
      u = j->kp * e - j->kd * j->v;
      u = u > f->limit ? f->limit : u < -f->limit ? -f->limit : u;
    }
    f->u[i] = u;
    ach_joint_command *c = &m.u.motor_command.joints[m.u.motor_command.count++];
    c->joint_id = (uint8_t)i;
    c->mode = (uint8_t)f->mode;
    c->value = (float)u;
  }
  if (f->bug == BUG_NO_FEED && f->have_sent && f->sim_time < f->sent_at + 0.15) {
    memset(&m, 0, sizeof m); /* the planted bug: too soon to feed again, only ask for a step */
    m.type = ACH_MSG_STEP_REQUEST;
    m.u.step_request.steps = 1;
    return send_message(f, &m);
  }
  f->sent_at = f->sim_time;
  f->have_sent = 1;
  f->commands++;
  return send_message(f, &m);
}

/* a new reading of joint j: angle from counts, velocity from the last two readings */
static void update_joint(firmware *f, joint *j, const ach_sample *s, double t) {
  double q = (double)(s->v.counts - j->zero) * 2 * PI / j->cpr;
  j->counts = s->v.counts;
  if (j->have && s->sample_seq != j->seq && t > j->t) {
    double raw = (q - j->q) / (t - j->t);
    double a = 1 - exp(-2 * PI * f->cutoff_hz * (t - j->t));
    j->v += a * (raw - j->v);
  }
  if (!j->have || q < j->qmin) {
    j->qmin = q;
  }
  if (!j->have || q > j->qmax) {
    j->qmax = q;
  }
  j->q = q, j->t = t, j->seq = s->sample_seq;
  j->have = 1;
}

static void print_line(firmware *f) {
  printf("t=%.3f", f->sim_time);
  for (int i = 0; i < f->n; i++) {
    printf("  j%d q=%+.4f e=%+.4f u=%+.3f", i, f->j[i].q, f->j[i].setpoint - f->j[i].q, f->u[i]);
  }
  printf("  (%lu frames, %lu commands)\n", f->frames, f->commands);
  fflush(stdout);
}

/* The index channel of a homing joint read 1: the last count (of the same sample, which comes
 * first in the frame) is the mark. Shifting q with the zero keeps the velocity filter smooth. */
static void home_joint(firmware *f, int i) {
  joint *j = &f->j[i];
  if (j->homing != 1 || !j->have) {
    return;
  }
  j->q -= (double)(j->counts - j->zero) * 2 * PI / j->cpr;
  j->zero = j->counts;
  j->homing = 0;
  fprintf(stderr, "pd_firmware: joint %d homed: index mark at count %ld (t=%.3f s)\n", i,
          (long)j->zero, f->sim_time);
}

/* Homing on a stop: once the joint has stood still for 0.1 s, its position is the stop's angle.
 * The wait of 0.2 s first lets a joint that starts at rest get going. */
static void home_on_stop(firmware *f, int i) {
  joint *j = &f->j[i];
  if (j->homing != 2 || !j->have) {
    return;
  }
  if (j->home_t0 < 0) {
    j->home_t0 = j->still_since = f->sim_time;
  }
  if (fabs(j->v) > 0.02) {
    j->still_since = f->sim_time;
  }
  if (f->sim_time - j->home_t0 < 0.2 || f->sim_time - j->still_since < 0.1) {
    return;
  }
  const double angle = f->bug == BUG_STOP_SIGN ? -j->stop_angle : j->stop_angle;
  const int32_t shift = (int32_t)lround(angle * j->cpr / (2 * PI));
  j->q -= (double)(j->counts - shift - j->zero) * 2 * PI / j->cpr;
  j->zero = j->counts - shift;
  j->homing = 0;
  fprintf(stderr, "pd_firmware: joint %d homed: hard stop at count %ld is %.4f rad (t=%.3f s)\n",
          i, (long)j->counts, j->stop_angle, f->sim_time);
}

/* A frame with an entry of a controlled joint's encoder (good or not) is answered with one
 * command: in lockstep the simulator waits for it. Dropped or faulty readings keep the last. */
static int on_samples(firmware *f, const ach_sensor_samples *ss) {
  int seen = 0;
  f->frames++;
  f->sim_time = 1e-9 * (double)ss->sim_time_ns;
  for (int k = 0; k < ss->count; k++) {
    const ach_sample *s = &ss->samples[k];
    int good = s->kind == ACH_KIND_COUNTS && !(s->flags & (ACH_SAMPLE_DROPPED | ACH_SAMPLE_FAULT));
    for (int i = 0; i < f->n; i++) {
      if (f->j[i].encoder == s->sensor_id) {
        seen = 1;
        if (good) {
          update_joint(f, &f->j[i], s, 1e-9 * ((double)ss->sim_time_ns - (double)s->age_ns));
          home_on_stop(f, i);
        }
      } else if (f->j[i].index == s->sensor_id && s->kind == ACH_KIND_VALUE &&
                 !(s->flags & (ACH_SAMPLE_DROPPED | ACH_SAMPLE_FAULT)) && s->v.value == 1.0f) {
        home_joint(f, i);
      }
    }
  }
  if (f->verbose && f->sim_time >= f->next_print) {
    print_line(f);
    f->next_print = floor(f->sim_time) + 1;
  }
  return seen ? send_command(f) : 0;
}

/* DESCRIBE (protocol 1.1): the encoder counts channel of each joint and its counts per turn,
 * for the joints whose --encoder / --cpr were not given. A 1.0 simulator does not answer; the
 * defaults stay. */
static int send_describe(firmware *f) {
  ach_message m;
  memset(&m, 0, sizeof m);
  m.type = ACH_MSG_DESCRIBE;
  m.u.describe.sensor_id = ACH_DESCRIBE_ALL;
  return send_message(f, &m);
}

static void on_sensor_info(firmware *f, const ach_sensor_info *in) {
  const size_t len = strlen(in->name);
  if (in->sensor_type == ACH_SENSOR_ENCODER && in->joint < f->n && len > 6 &&
      strcmp(in->name + len - 6, ".index") == 0 && !f->j[in->joint].index_given) {
    f->j[in->joint].index = in->sensor_id; /* the channel homing watches */
    return;
  }
  if (in->sensor_type != ACH_SENSOR_ENCODER || in->kind != ACH_KIND_COUNTS ||
      in->joint >= f->n || in->counts_per_rev == 0 || f->j[in->joint].given) {
    return;
  }
  joint *j = &f->j[in->joint];
  if (j->encoder != in->sensor_id || j->cpr != (double)in->counts_per_rev) {
    fprintf(stderr, "pd_firmware: joint %u: encoder %s, id %u, %lu counts per turn\n", in->joint,
            in->name, in->sensor_id, (unsigned long)in->counts_per_rev);
  }
  j->encoder = in->sensor_id;
  j->cpr = (double)in->counts_per_rev;
}

/* Returns 1 to stop (duration reached), -1 on a write error, else 0. */
static int on_message(firmware *f, const ach_message *m) {
  switch (m->type) {
  case ACH_MSG_HELLO_ACK:
    if (m->u.hello_ack.result != ACH_HELLO_OK) {
      fprintf(stderr, "pd_firmware: HELLO refused (result %u)\n", m->u.hello_ack.result);
      return -1;
    }
    f->n = m->u.hello_ack.n_joints < MAX_J ? m->u.hello_ack.n_joints : MAX_J;
    f->connected = 1;
    fprintf(stderr, "pd_firmware: connected: %d joints, %u sensor ids, %u Hz (protocol %u.%u)\n",
            f->n, m->u.hello_ack.n_sensors, (unsigned)m->u.hello_ack.physics_rate_hz,
            m->u.hello_ack.version_major, m->u.hello_ack.version_minor);
    return m->u.hello_ack.version_minor >= 1 && send_describe(f) ? -1 : 0;
  case ACH_MSG_SENSOR_INFO:
    on_sensor_info(f, &m->u.sensor_info);
    return 0;
  case ACH_MSG_SENSOR_SAMPLES:
    if (!f->connected) {
      return 0;
    }
    if (on_samples(f, &m->u.sensor_samples)) {
      return -1;
    }
    return f->duration_s > 0 && f->sim_time >= f->duration_s;
  case ACH_MSG_ERROR:
    fprintf(stderr, "pd_firmware: simulator error %u: %s\n", m->u.error.code, m->u.error.text);
    return 0;
  default:
    return 0;
  }
}

/* --- command line ----------------------------------------------------------------------------- */

/* "J=V" into joint and value, or a plain "V" for every joint (*joint = -1) */
static int parse_pair(const char *s, int *jnt, double *value) {
  char *end;
  const char *eq = strchr(s, '=');
  *jnt = -1;
  if (eq) {
    long id = strtol(s, &end, 10);
    if (end != eq || id < 0 || id >= MAX_J) {
      return -1;
    }
    *jnt = (int)id;
    s = eq + 1;
  }
  *value = strtod(s, &end);
  return (end == s || *end != '\0' || !isfinite(*value)) ? -1 : 0;
}

static int parse_mode(const char *s) {
  static const char *const names[] = {"torque", "duty", "voltage", "position", "velocity"};
  for (int i = 0; i < 5; i++) {
    if (strcmp(s, names[i]) == 0) {
      return i;
    }
  }
  return -1;
}

static void defaults(firmware *f) {
  static const int encoders[4] = {0, 4, 7, 10};
  static const double cpr[4] = {8192, 16384, 16384, 4096};
  static const double kp[4] = {20, 20, 20, 2}, kd[4] = {0.3, 0.3, 0.3, 0.01};
  memset(f, 0, sizeof *f);
  f->name = "pd_firmware";
  f->fd = -1;
  f->mode = ACH_MODE_DUTY;
  f->limit = 1.0;
  f->cutoff_hz = 50;
  f->chirp_f0 = 0.2;
  f->chirp_f1 = 3;
  f->chirp_period = 10;
  f->verbose = 1;
  for (int i = 0; i < MAX_J; i++) {
    f->j[i].kp = i < 4 ? kp[i] : 20;
    f->j[i].kd = i < 4 ? kd[i] : 0.3;
    f->j[i].encoder = i < 4 ? encoders[i] : -1;
    f->j[i].cpr = i < 4 ? cpr[i] : 4096;
    f->j[i].index = i == 0 ? 3 : -1; /* the club arm's base encoder has one */
  }
}

/* sets field `which` of joint jnt, or of every joint when jnt < 0 */
static void set_field(firmware *f, int jnt, char which, double v) {
  for (int i = 0; i < MAX_J; i++) {
    if (jnt >= 0 && i != jnt) {
      continue;
    }
    joint *j = &f->j[i];
    if (which == 's') {
      j->setpoint = v;
    } else if (which == 'C') {
      j->chirp = v;
    } else if (which == 'p') {
      j->kp = v;
    } else if (which == 'd') {
      j->kd = v;
    } else if (which == 'e') {
      j->encoder = (int)v;
    } else if (which == 'i') {
      j->index = (int)v;
      j->index_given = 1;
    } else if (which == 'h' || which == 'H') {
      j->home_cmd = v;
      j->homing = v == 0 ? 0 : which == 'h' ? 1 : 2;
      j->home_t0 = -1;
    } else if (which == 'a') {
      j->stop_angle = v;
    } else if (which == 'g') {
      j->given = 1;
    } else {
      j->cpr = v;
    }
  }
}

static int parse_args(firmware *f, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int jnt;
    double x;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    } else if (strcmp(a, "--quiet") == 0) {
      f->verbose = 0;
    } else if (strcmp(a, "--stdin") == 0) {
      f->use_stdin = 1;
    } else if (strcmp(a, "--planted-bug") == 0 && v) {
      static const char *const bugs[] = {"wrong-sign", "no-feed", "stop-sign"};
      for (int b = 0; b < 3; b++) {
        if (strcmp(v, bugs[b]) == 0) {
          f->bug = b + 1;
        }
      }
      if (!f->bug) {
        fprintf(stderr, "pd_firmware: --planted-bug %s: one of wrong-sign, no-feed, stop-sign\n", v);
        return -1;
      }
      i++;
    } else if (strcmp(a, "--chirp-band") == 0 && v) {
      char *end;
      f->chirp_f0 = strtod(v, &end);
      f->chirp_f1 = *end == ':' ? strtod(end + 1, &end) : -1;
      if (*end || !(f->chirp_f0 >= 0) || !(f->chirp_f1 > 0)) {
        fprintf(stderr, "pd_firmware: --chirp-band %s: expected F0:F1 in Hz\n", v);
        return -1;
      }
      i++;
    } else if (a[0] != '-') {
      f->port = a;
    } else if (!v) {
      fprintf(stderr, "pd_firmware: %s needs a value\n", a);
      return -1;
    } else if (strcmp(a, "--name") == 0) {
      f->name = v, i++;
    } else if (strcmp(a, "--mode") == 0) {
      if ((f->mode = parse_mode(v)) < 0) {
        fprintf(stderr, "pd_firmware: --mode %s: unknown mode\n", v);
        return -1;
      }
      i++;
    } else if (parse_pair(v, &jnt, &x) != 0) {
      fprintf(stderr, "pd_firmware: %s %s: expected a number or JOINT=NUMBER\n", a, v);
      return -1;
    } else {
      i++;
      int needs_joint = strcmp(a, "--setpoint") == 0 || strcmp(a, "--encoder") == 0 ||
                        strcmp(a, "--home") == 0 || strcmp(a, "--index") == 0 ||
                        strcmp(a, "--home-stop") == 0 || strcmp(a, "--stop-angle") == 0 ||
                        strcmp(a, "--chirp") == 0;
      if (needs_joint && jnt < 0) {
        fprintf(stderr, "pd_firmware: %s %s: expected JOINT=VALUE\n", a, v);
        return -1;
      }
      if (strcmp(a, "--setpoint") == 0) {
        set_field(f, jnt, 's', x);
      } else if (strcmp(a, "--kp") == 0) {
        set_field(f, jnt, 'p', x);
      } else if (strcmp(a, "--kd") == 0) {
        set_field(f, jnt, 'd', x);
      } else if (strcmp(a, "--encoder") == 0) {
        set_field(f, jnt, 'e', x);
        set_field(f, jnt, 'g', 1);
      } else if (strcmp(a, "--index") == 0) {
        set_field(f, jnt, 'i', x);
      } else if (strcmp(a, "--home") == 0 && x != 0) {
        set_field(f, jnt, 'h', x);
      } else if (strcmp(a, "--home-stop") == 0 && x != 0) {
        set_field(f, jnt, 'H', x);
      } else if (strcmp(a, "--stop-angle") == 0) {
        set_field(f, jnt, 'a', x);
      } else if (strcmp(a, "--cpr") == 0 && x > 0) {
        set_field(f, jnt, 'c', x);
        set_field(f, jnt, 'g', 1);
      } else if (strcmp(a, "--limit") == 0 && jnt < 0 && x > 0) {
        f->limit = x;
      } else if (strcmp(a, "--cutoff") == 0 && jnt < 0 && x > 0) {
        f->cutoff_hz = x;
      } else if (strcmp(a, "--duration") == 0 && jnt < 0 && x >= 0) {
        f->duration_s = x;
      } else if (strcmp(a, "--chirp") == 0) {
        set_field(f, jnt, 'C', x);
      } else if (strcmp(a, "--chirp-period") == 0 && jnt < 0 && x > 0) {
        f->chirp_period = x;
      } else {
        fprintf(stderr, "pd_firmware: %s %s: unknown option or bad value (see --help)\n", a, v);
        return -1;
      }
    }
  }
  if (!f->port) {
    fputs(usage, stderr);
    return -1;
  }
  return 0;
}

/* --- main loop -------------------------------------------------------------------------------- */

/* One line of standard input: "setpoint J=RAD", "kp J=K" or "kd J=K" (J= may be left out for
 * every joint). Anything else is said and ignored. */
static void on_stdin_line(firmware *f, char *line) {
  char *value = strchr(line, ' ');
  int jnt;
  double x;
  if (value) {
    *value++ = '\0';
  }
  const char which = strcmp(line, "setpoint") == 0 ? 's'
                     : strcmp(line, "kp") == 0     ? 'p'
                     : strcmp(line, "kd") == 0     ? 'd'
                                                   : 0;
  if (!which || !value || parse_pair(value, &jnt, &x) != 0 || (which == 's' && jnt < 0)) {
    fprintf(stderr, "pd_firmware: standard input: expected \"setpoint J=RAD\", \"kp [J=]K\" or "
                    "\"kd [J=]K\", got \"%s%s%s\"\n", line, value ? " " : "", value ? value : "");
    return;
  }
  set_field(f, jnt, which, x);
  fprintf(stderr, "pd_firmware: %s %s at t=%.3f s\n", line, value, f->sim_time);
}

/* Whatever standard input has: whole lines are applied; 0 at its end (no more polling). */
static int read_stdin(firmware *f) {
  char buf[256];
  ssize_t n = read(0, buf, sizeof buf);
  if (n < 0 && errno == EINTR) {
    return 1;
  }
  if (n <= 0) {
    return 0;
  }
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n' || f->line_len == sizeof f->line - 1) {
      f->line[f->line_len] = '\0';
      if (f->line_len > 0) {
        on_stdin_line(f, f->line);
      }
      f->line_len = 0;
    } else if (buf[i] != '\r') {
      f->line[f->line_len++] = buf[i];
    }
  }
  return 1;
}

static int run(firmware *f) {
  uint8_t buf[1024];
  int since_hello = 0;
  for (;;) {
    struct pollfd p[2];
    p[0].fd = f->fd, p[0].events = POLLIN, p[0].revents = 0;
    p[1].fd = 0, p[1].events = POLLIN, p[1].revents = 0;
    int r = poll(p, f->use_stdin ? 2 : 1, 500);
    if (r < 0 && errno != EINTR) {
      perror("pd_firmware: poll");
      return 1;
    }
    if (r == 0 && !f->connected && ++since_hello >= 2) {
      since_hello = 0;
      if (send_hello(f)) { /* no answer for a second: say HELLO again */
        return 1;
      }
    }
    if (r <= 0) {
      continue;
    }
    /* standard input first: a line written before a lockstep step acts on its samples */
    if (f->use_stdin && (p[1].revents & (POLLIN | POLLHUP)) && !read_stdin(f)) {
      f->use_stdin = 0;
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      continue;
    }
    ssize_t n = read(f->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      fprintf(stderr, "pd_firmware: %s closed\n", f->port);
      return f->connected ? 0 : 1;
    }
    for (ssize_t i = 0; i < n; i++) {
      const ach_message *m = ach_decoder_feed(&f->dec, buf[i]);
      int rc = m ? on_message(f, m) : 0;
      if (rc < 0 && peer_gone) {
        fprintf(stderr, "pd_firmware: %s closed\n", f->port);
        return f->connected ? 0 : 1;
      }
      if (rc != 0) {
        if (rc > 0 && f->verbose) {
          print_line(f);
        }
        return rc > 0 ? 0 : 1;
      }
    }
  }
}

int main(int argc, char **argv) {
  static firmware f;
  defaults(&f);
  if (parse_args(&f, argc, argv) != 0) {
    return 2;
  }
  f.fd = open_port(f.port);
  if (f.fd < 0) {
    fprintf(stderr, "pd_firmware: %s: %s\n", f.port, strerror(errno));
    return 1;
  }
  ach_decoder_init(&f.dec);
  if (send_hello(&f) != 0) {
    fprintf(stderr, "pd_firmware: %s: write failed\n", f.port);
    return 1;
  }
  int rc = run(&f);
  close(f.fd);
  /* the range each joint went through: overshoot past a set point shows here */
  fprintf(stderr, "pd_firmware: range of q:");
  for (int i = 0; i < f.n; i++) {
    if (f.j[i].have) {
      fprintf(stderr, "  j%d [%+.4f, %+.4f]", i, f.j[i].qmin, f.j[i].qmax);
    }
  }
  fprintf(stderr, "\n");
  return rc;
}
