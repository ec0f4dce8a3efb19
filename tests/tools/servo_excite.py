#!/usr/bin/python3
"""tests/tools/servo_excite.py PORT SECONDS: moves a Dynamixel X-series arm (configs/servo_arm.json's
four servos, IDs 1-4) over the servo bus so that a recording excites every joint, for
`achilles sysid` (docs/sysid.md section 9): torque on, then every 20 ms a new Goal Position
for each servo, a sum of two sines around where it started (joint j: 300 ticks at 0.4 + 0.15·j
Hz and 150 ticks at 1.1 + 0.2·j Hz), for SECONDS of wall time. Standard library only; the packets
are those of tools/scripts/servo_bus_example.py (docs/servo-bus.md)."""
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "scripts"))
import servo_bus_example as bus  # noqa: E402

bus.send.__defaults__ = ()  # keep the example's own printing of first packets


def main():
    port, seconds = sys.argv[1], float(sys.argv[2])
    fd = bus.open_port(port)
    ids = [1, 2, 3, 4]
    bus.dxl_sync_write(fd, 64, 1, {sid: 1 for sid in ids}, "SYNC_WRITE torque on")
    start = bus.dxl_sync_read(fd, ids, 132, 4)  # Present Position
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        t = time.monotonic() - t0
        goal = {}
        for j, sid in enumerate(ids):
            goal[sid] = start[sid] + int(300 * math.sin(2 * math.pi * (0.4 + 0.15 * j) * t)
                                         + 150 * math.sin(2 * math.pi * (1.1 + 0.2 * j) * t))
        bus.dxl_sync_write(fd, 116, 4, goal, "SYNC_WRITE goals")
        time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main())
