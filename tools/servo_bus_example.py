#!/usr/bin/python3
"""Drives the simulated arm's smart servos over the servo bus, with nothing but the Python
standard library: the two protocols written out from their manuals (docs/servo-bus.md).

    achilles run configs/servo_arm.json --servo-bus pty        # prints the pty, e.g. /dev/pts/3
    tools/servo_bus_example.py dynamixel2 /dev/pts/3

    achilles run configs/servo_arm_sts.json --servo-bus pty
    tools/servo_bus_example.py feetech /dev/pts/3

Pings servos 1-4, turns torque on, sends servo 1 (the base) a quarter turn from where it is and
prints its present position until it is there. Exit status 0 when it arrived.

    --planted-bug wrong-direction   the quarter turn the other way: a deliberate bug, for the
                                    failing twin of configs/scenarios/servo_bus_turn.json
"""
import os
import select
import sys
import termios
import time
import tty


def open_port(path):
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)  # a pty has no baud rate; on a real adapter set 1 000 000 here
    termios.tcflush(fd, termios.TCIOFLUSH)
    return fd


def read_exactly(fd, n, timeout=0.5):
    data, until = b"", time.monotonic() + timeout
    while len(data) < n and time.monotonic() < until:
        if select.select([fd], [], [], until - time.monotonic())[0]:
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


def dxl_transact(fd, sid, inst, params=b""):
    os.write(fd, dxl_packet(sid, inst, params))
    head = read_exactly(fd, 7)
    if len(head) < 7 or head[:4] != b"\xff\xff\xfd\x00":
        raise RuntimeError(f"no status from ID {sid}")
    rest = read_exactly(fd, head[5] | head[6] << 8)
    packet = head + rest
    if crc16(packet[:-2]) != packet[-2] | packet[-1] << 8:
        raise RuntimeError("bad CRC")
    return packet[8], packet[9:-2]  # error byte, data (no stuffing in these short replies)


def dxl_main(fd):
    for sid in range(1, 5):
        err, data = dxl_transact(fd, sid, 0x01)
        print(f"ID {sid}: model {data[0] | data[1] << 8}, firmware {data[2]}")
    for sid in range(1, 5):
        dxl_transact(fd, sid, 0x03, bytes([64, 0, 1]))  # Torque Enable (64) = 1
    _, data = dxl_transact(fd, 1, 0x02, bytes([132, 0, 4, 0]))  # Present Position (132)
    goal = int.from_bytes(data, "little", signed=True) + QUARTER
    dxl_transact(fd, 1, 0x03, bytes([112, 0]) + (60).to_bytes(4, "little"))  # Profile Velocity
    dxl_transact(fd, 1, 0x03, bytes([116, 0]) + goal.to_bytes(4, "little", signed=True))
    until = time.monotonic() + 10
    while time.monotonic() < until:
        _, data = dxl_transact(fd, 1, 0x02, bytes([132, 0, 4, 0]))
        present = int.from_bytes(data, "little", signed=True)
        print(f"present position {present}, goal {goal}")
        if abs(present - goal) <= 10:
            return 0
        time.sleep(0.1)
    return 1


# --- Feetech SMS/STS --------------------------------------------------------------------------

def ft_packet(sid, inst, params=b""):
    length = len(params) + 2
    checksum = ~(sid + length + inst + sum(params)) & 0xFF
    return bytes([0xFF, 0xFF, sid, length, inst]) + bytes(params) + bytes([checksum])


def ft_transact(fd, sid, inst, params=b""):
    os.write(fd, ft_packet(sid, inst, params))
    head = read_exactly(fd, 4)
    if len(head) < 4 or head[:2] != b"\xff\xff":
        raise RuntimeError(f"no reply from ID {sid}")
    rest = read_exactly(fd, head[3])
    if (~sum(head[2:] + rest[:-1]) & 0xFF) != rest[-1]:
        raise RuntimeError("bad checksum")
    return rest[0], rest[1:-1]  # status byte, data


def sign_magnitude(value, bit=15):
    return abs(value) | (1 << bit if value < 0 else 0)


def ft_main(fd):
    for sid in range(1, 5):
        _, data = ft_transact(fd, sid, 0x02, bytes([3, 2]))  # Model Number (3)
        print(f"ID {sid}: model {data[0] | data[1] << 8}")
    for sid in range(1, 5):
        ft_transact(fd, sid, 0x03, bytes([40, 1]))  # Torque Enable (40) = 1
    _, data = ft_transact(fd, 1, 0x02, bytes([56, 2]))  # Present Position (56)
    goal = (int.from_bytes(data, "little") + QUARTER) % 4096
    speed = sign_magnitude(1500)  # steps/s
    ft_transact(fd, 1, 0x03, bytes([42]) + goal.to_bytes(2, "little") + bytes([0, 0]) +
                speed.to_bytes(2, "little"))  # Goal Position (42), Goal Time, Goal Speed
    until = time.monotonic() + 10
    while time.monotonic() < until:
        _, data = ft_transact(fd, 1, 0x02, bytes([56, 2]))
        present = int.from_bytes(data, "little") & 0x7FFF
        print(f"present position {present}, goal {goal}")
        if abs(present - goal) <= 12:
            return 0
        time.sleep(0.1)
    return 1


QUARTER = 1024  # ticks: a quarter of the 4096 a turn


if __name__ == "__main__":
    if sys.argv[3:] == ["--planted-bug", "wrong-direction"]:
        QUARTER = -1024
        del sys.argv[3:]
    if len(sys.argv) != 3 or sys.argv[1] not in ("dynamixel2", "feetech"):
        sys.exit(__doc__)
    port = open_port(sys.argv[2])
    sys.exit(dxl_main(port) if sys.argv[1] == "dynamixel2" else ft_main(port))
