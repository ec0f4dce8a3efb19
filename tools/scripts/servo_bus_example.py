#!/usr/bin/python3
"""Drives the simulated arm's smart servos over the servo bus, with nothing but the Python
standard library: the two protocols written out from their manuals (docs/servo-bus.md).

    achilles run configs/desk_arm.urdf --servos configs/desk_arm.sts3215.servos.json \\
        --pty-link /tmp/arm &
    tools/scripts/servo_bus_example.py feetech /tmp/arm

    achilles run configs/desk_arm.urdf --servos configs/desk_arm.xl430.servos.json \\
        --pty-link /tmp/arm &
    tools/scripts/servo_bus_example.py dynamixel2 /tmp/arm

Pings IDs 1-6 (the servos that answer are the arm), turns their torque on with one SYNC_WRITE,
reads where they are with one SYNC_READ, sends every joint a step from there (the gripper
opens) with one SYNC_WRITE, and reads positions and Moving with SYNC_READs until every servo
says Moving = 0 and holds still. Prints the first packet of each kind as it goes on the wire. Exit status 0
when every servo came to rest within its tolerance of the goal.

    --planted-bug wrong-direction   every step the other way: a deliberate bug, for the failing
                                    twin of configs/scenarios/servo_bus_turn.json
"""
import os
import select
import sys
import termios
import time
import tty

STEPS = [300, -250, 300, -250, 500, 400]  # ticks, joint by joint from the base
TOLERANCE = {"dynamixel2": 40, "feetech": 15}  # ticks (no integral gain: gravity's offset)
shown = set()


def open_port(path):
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)  # a pty has no baud rate; on a real adapter set 1 000 000 here
    termios.tcflush(fd, termios.TCIOFLUSH)
    return fd


def send(fd, packet, what):
    if what not in shown:  # the first of each kind, as on the wire
        shown.add(what)
        print(f"  {what:<24} {packet.hex(' ').upper()}")
    os.write(fd, packet)


def read_exactly(fd, n, timeout=0.5):
    data, until = b"", time.monotonic() + timeout
    while len(data) < n and time.monotonic() < until:
        if select.select([fd], [], [], max(0.0, until - time.monotonic()))[0]:
            data += os.read(fd, n - len(data))
    return data


# --- Dynamixel Protocol 2.0 -------------------------------------------------------------------

def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def dxl_packet(sid, inst, params=b""):
    body = bytearray()
    for b in params:  # byte stuffing: FF FF FD gets an extra FD
        body.append(b)
        if body[-3:] == b"\xff\xff\xfd":
            body.append(0xFD)
    length = len(body) + 3
    p = bytes([0xFF, 0xFF, 0xFD, 0x00, sid, length & 0xFF, length >> 8, inst]) + body
    c = crc16(p)
    return p + bytes([c & 0xFF, c >> 8])


def dxl_status(fd, timeout=0.5):
    head = read_exactly(fd, 7, timeout)
    if len(head) < 7 or head[:4] != b"\xff\xff\xfd\x00":
        return None
    packet = head + read_exactly(fd, head[5] | head[6] << 8)
    if crc16(packet[:-2]) != packet[-2] | packet[-1] << 8:
        raise RuntimeError("bad CRC")
    return packet[4], packet[8], packet[9:-2]  # ID, error, data (short replies: no stuffing)


def dxl_sync_write(fd, address, size, values, what):
    params = bytes([address & 0xFF, address >> 8, size, 0])
    for sid, v in values.items():
        params += bytes([sid]) + v.to_bytes(size, "little", signed=v < 0)
    send(fd, dxl_packet(0xFE, 0x83, params), what)


def dxl_sync_read(fd, ids, address, size):
    send(fd, dxl_packet(0xFE, 0x82, bytes([address, 0, size, 0]) + bytes(ids)),
         f"SYNC_READ {size} at {address}")
    out = {}
    for _ in ids:  # the servos answer one after another, in the order asked
        sid, _, data = dxl_status(fd)
        out[sid] = int.from_bytes(data, "little", signed=True)
    return out


def dxl_main(fd):
    ids = []
    for sid in range(1, 7):
        send(fd, dxl_packet(sid, 0x01), "PING")
        reply = dxl_status(fd, 0.1)
        if reply:
            print(f"ID {sid}: model {reply[2][0] | reply[2][1] << 8}, firmware {reply[2][2]}")
            ids.append(sid)
    dxl_sync_write(fd, 64, 1, {sid: 1 for sid in ids}, "SYNC_WRITE torque on")
    # Profile Acceleration (108) 20 and Profile Velocity (112) 60: one 8-byte write each
    dxl_sync_write(fd, 108, 8, {sid: 20 | 60 << 32 for sid in ids}, "SYNC_WRITE profile")
    start = dxl_sync_read(fd, ids, 132, 4)  # Present Position
    goal = {sid: start[sid] + STEPS[i] for i, sid in enumerate(ids)}
    dxl_sync_write(fd, 116, 4, goal, "SYNC_WRITE goals")
    time.sleep(0.05)  # the servos' loops take the goals at their next step
    return settle(fd, ids, goal, lambda: dxl_sync_read(fd, ids, 132, 4),
                  lambda: dxl_sync_read(fd, ids, 122, 1), TOLERANCE["dynamixel2"])


# --- Feetech SMS/STS --------------------------------------------------------------------------

def ft_packet(sid, inst, params=b""):
    length = len(params) + 2
    checksum = ~(sid + length + inst + sum(params)) & 0xFF
    return bytes([0xFF, 0xFF, sid, length, inst]) + bytes(params) + bytes([checksum])


def ft_reply(fd, timeout=0.5):
    head = read_exactly(fd, 4, timeout)
    if len(head) < 4 or head[:2] != b"\xff\xff":
        return None
    rest = read_exactly(fd, head[3])
    if (~sum(head[2:] + rest[:-1]) & 0xFF) != rest[-1]:
        raise RuntimeError("bad checksum")
    return head[2], rest[0], rest[1:-1]  # ID, status byte, data


def sign_magnitude(value, bit=15):
    return abs(value) | (1 << bit if value < 0 else 0)


def ft_sync_write(fd, address, data_by_id, what):
    size = len(next(iter(data_by_id.values())))
    params = bytes([address, size])
    for sid, data in data_by_id.items():
        params += bytes([sid]) + data
    send(fd, ft_packet(0xFE, 0x83, params), what)


def ft_sync_read(fd, ids, address, size):
    send(fd, ft_packet(0xFE, 0x82, bytes([address, size]) + bytes(ids)),
         f"SYNC_READ {size} at {address}")
    out = {}
    for _ in ids:
        sid, _, data = ft_reply(fd)
        out[sid] = int.from_bytes(data, "little")
    return out


def ft_main(fd):
    ids = []
    for sid in range(1, 7):
        send(fd, ft_packet(sid, 0x01), "PING")
        if ft_reply(fd, 0.1):
            send(fd, ft_packet(sid, 0x02, bytes([3, 2])), "READ 2 at 3 (model)")
            _, _, data = ft_reply(fd)
            print(f"ID {sid}: model {data[0] | data[1] << 8}")
            ids.append(sid)
    ft_sync_write(fd, 40, {sid: bytes([1]) for sid in ids}, "SYNC_WRITE torque on")
    start = {sid: p & 0x7FFF for sid, p in ft_sync_read(fd, ids, 56, 2).items()}
    goal = {sid: (start[sid] + STEPS[i]) % 4096 for i, sid in enumerate(ids)}
    # Acceleration (41) 50 × 100 steps/s², Goal Position (42), Goal Time (44) 0,
    # Goal Speed (46) 1500 steps/s: seven bytes per servo
    speed = sign_magnitude(1500).to_bytes(2, "little")
    ft_sync_write(fd, 41, {sid: bytes([50]) + goal[sid].to_bytes(2, "little") + bytes(2) +
                           speed for sid in ids}, "SYNC_WRITE goals")
    time.sleep(0.05)  # the servos' loops take the goals at their next step
    positions = lambda: {s: p & 0x7FFF for s, p in ft_sync_read(fd, ids, 56, 2).items()}
    return settle(fd, ids, goal, positions, lambda: ft_sync_read(fd, ids, 66, 1),
                  TOLERANCE["feetech"])


def settle(fd, ids, goal, positions, moving, tolerance):
    """Reads positions and Moving until every servo is at rest; 0 when each is near its goal.

    Moving = 0 alone is not rest: once its profile has ended a servo still creeping towards the
    goal slower than its Moving Threshold (X-series: 10 × 0.229 rpm, about 156 ticks/s) reports
    Moving = 0, as the real servo does. So rest is Moving = 0 on every servo and no position
    changed by more than a tick over the last three reads."""
    until, t0 = time.monotonic() + 20, time.monotonic()
    still, last = 0, None
    while time.monotonic() < until:
        present, flags = positions(), moving()
        line = "  ".join(f"{sid}:{present[sid]:5d}{'*' if flags[sid] else ' '}" for sid in ids)
        print(f"{time.monotonic() - t0:5.2f} s  {line}")
        steady = last is not None and all(abs(present[s] - last[s]) <= 1 for s in ids)
        still = still + 1 if not any(flags.values()) and steady else 0
        last = present
        if still >= 3:
            errors = {sid: present[sid] - goal[sid] for sid in ids}
            print(f"every servo says Moving = 0 and holds still: off the goal by {errors} ticks")
            return 0 if all(abs(e) <= tolerance for e in errors.values()) else 1
        time.sleep(0.1)
    return 1


if __name__ == "__main__":
    if sys.argv[3:] == ["--planted-bug", "wrong-direction"]:
        STEPS[:] = [-step for step in STEPS]
        del sys.argv[3:]
    if len(sys.argv) != 3 or sys.argv[1] not in ("dynamixel2", "feetech"):
        sys.exit(__doc__)
    port = open_port(sys.argv[2])
    print("on the wire:")
    sys.exit(dxl_main(port) if sys.argv[1] == "dynamixel2" else ft_main(port))
