#!/usr/bin/python3
"""tests/tools/servo_excite.py PORT SECONDS [CSV]: moves a Dynamixel X-series arm (configs/servo_arm.json's
four servos, IDs 1-4) over the servo bus so that a recording excites every joint, for
`achilles sysid` (docs/sysid.md section 9): torque on, then every 20 ms a new Goal Position
for each servo, a sum of two sines around where it started (joint j: 300 ticks at 0.4 + 0.15·j
Hz and 150 ticks at 1.1 + 0.2·j Hz), for SECONDS of wall time. Standard library only; the packets
are those of tools/scripts/servo_bus_example.py (docs/servo-bus.md).

With CSV, it also logs what a real arm's controller would (docs/sysid.md section 10): every 5 ms
the Present Positions it reads (columns q1..q4) and every goal it writes (g1..g4), in rad
((ticks - 2048)·2π/4096); a read row leaves the goals blank (held), a write row the positions
(missing). Time t (s) is the servos' own clock: a read takes Realtime Tick (register 120, ms, one
more than the loop steps before the one whose presents it reads) with the positions; a write is
stamped with the last read's time plus the client's own time since it (Recorder.write_goals), which
is good to about a step of the servos' loop: docs/sysid.md section 10 measures what that costs."""
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "scripts"))
import servo_bus_example as bus  # noqa: E402

bus.send.__defaults__ = ()  # keep the example's own printing of first packets


def goals_at(start, ids, t):
    return {sid: start[sid] + int(300 * math.sin(2 * math.pi * (0.4 + 0.15 * j) * t)
                                  + 150 * math.sin(2 * math.pi * (1.1 + 0.2 * j) * t))
            for j, sid in enumerate(ids)}


class Recorder:
    """The CSV of a logging run: reads of Realtime Tick (120) .. Position Trajectory (140)."""

    def __init__(self, fd, ids, path):
        self.fd, self.ids, self.ms, self.tick, self.last = fd, ids, 0.0, None, -1.0
        self.pending, self.at, self.t_read = None, time.monotonic(), 0.0
        self.out = open(path, "w")
        self.out.write("t," + ",".join(f"q{j + 1}" for j in range(4)) + ","
                       + ",".join(f"g{j + 1}" for j in range(4)) + "\n")

    def drain(self):
        """After a lost or garbled reply (a stalled machine): drop what is left on the line
        until it has been quiet for 50 ms, as a controller resynchronising on a bus does."""
        while bus.read_exactly(self.fd, 256, 0.05):
            pass

    def read(self):
        """(t, Present Positions, Position Trajectories): t the servos' clock, s, of the loop
        step whose presents these are (its tick less the one the step itself counted); None
        when a reply did not come whole (the read is given up, the line drained)."""
        bus.send(self.fd, bus.dxl_packet(0xFE, 0x82, bytes([120, 0, 24, 0]) + bytes(self.ids)),
                 "SYNC_READ 24 at 120")
        present, traj = {}, {}
        for _ in self.ids:
            status = bus.dxl_status(self.fd)
            if status is None or len(status[2]) < 24:
                self.drain()
                return None
            sid, _, data = status
            # a long reply may carry byte stuffing (FF FF FD FD for FF FF FD: Protocol 2.0)
            data = data.replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")
            present[sid] = int.from_bytes(data[12:16], "little", signed=True)
            traj[sid] = int.from_bytes(data[20:24], "little", signed=True)
            tick = data[0] | data[1] << 8
        self.ms = float(tick) if self.tick is None else self.ms + (tick - self.tick) % 32768
        self.tick = tick
        return (self.ms - 1) / 1000.0, present, traj

    def row(self, t, present=None, goal=None):
        t = round(t, 6)  # as written: times must increase
        if t <= self.last:
            return
        cells = [rad(present[s]) if present else "" for s in self.ids]
        cells += [rad(goal[s]) if goal else "" for s in self.ids]
        self.out.write(f"{t:.6f}," + ",".join(cells) + "\n")
        self.last = t

    def write_goals(self, goal):
        """Writes the goals; their row is stamped with the last read's step plus the client's
        own time since that read, and goes out with the next read's row (before it when
        earlier; else just after it, where the loop takes them at the latest)."""
        self.pending = (self.t_read + time.monotonic() - self.at, goal)
        bus.dxl_sync_write(self.fd, 116, 4, goal, "SYNC_WRITE goals")

    def log_read(self):
        self.at = time.monotonic()
        got = self.read()
        if got is None:  # no row: the goals stay pending for the next read
            return
        t, present, _ = got
        self.t_read = t
        pending, self.pending = self.pending, None
        if pending and pending[0] < t:
            self.row(min(max(pending[0], self.last + 1e-5), t - 1e-5), goal=pending[1])
        self.row(t, present=present)
        if pending and pending[0] >= t:
            self.row(t + 0.0005, goal=pending[1])


def rad(ticks):
    return f"{(ticks - 2048) * 2 * math.pi / 4096:.9g}"


def main():
    port, seconds = sys.argv[1], float(sys.argv[2])
    fd = bus.open_port(port)
    ids = [1, 2, 3, 4]
    bus.dxl_sync_write(fd, 64, 1, {sid: 1 for sid in ids}, "SYNC_WRITE torque on")
    rec = Recorder(fd, ids, sys.argv[3]) if len(sys.argv) > 3 else None
    if rec:
        rec.at = time.monotonic()
        got = None
        while got is None:
            got = rec.read()
        rec.t_read, start, _ = got
        rec.row(rec.t_read, present=start, goal=start)
    else:
        start = bus.dxl_sync_read(fd, ids, 132, 4)  # Present Position
    t0 = time.monotonic()
    next_goal = 0.0
    while time.monotonic() - t0 < seconds:
        t = time.monotonic() - t0
        if t >= next_goal:
            goal = goals_at(start, ids, t)
            if rec:
                rec.write_goals(goal)
            else:
                bus.dxl_sync_write(fd, 116, 4, goal, "SYNC_WRITE goals")
            next_goal += 0.02
        if rec:
            rec.log_read()
            time.sleep(0.005)
        else:
            time.sleep(max(0.0, next_goal - (time.monotonic() - t0)))
    if rec:
        rec.out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
