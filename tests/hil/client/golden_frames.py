#!/usr/bin/python3
"""tests/hil/client/golden_frames.py: the example frames of docs/serial-protocol.md, built from
the written specification alone (struct.pack for the layouts, binascii.crc_hqx for
CRC-16/CCITT-FALSE, a separate COBS implementation), independently of hil/client/achilles_*.c.

Prints each frame as hex (for the document) and as a C initializer (for
test_client_messages.c). With --check C_FILE DOC_FILE it verifies instead that the test's golden
arrays and the document's examples are exactly these bytes, and with --encoder EXE also the
frames the C encoder makes (EXE --print-golden, i.e. test_client_messages) (run by ctest).
With --cobs it prints the COBS cases as C arrays (for test_client_framing.c), and with
--check-cobs C_FILE it verifies them.
Run: /usr/bin/python3 tests/hil/client/golden_frames.py [--check test.c doc.md [--encoder EXE]]
"""
import binascii
import re
import struct
import subprocess
import sys


def cobs(data):
    """COBS as in Cheshire & Baker: blocks of up to 254 non-zero bytes, each preceded by its
    length + 1; a block shorter than 254 stands for its bytes and one zero (the last block's
    zero is dropped); then the 0x00 delimiter."""
    out, block, full = bytearray(), bytearray(), False
    for b in data:
        full = False
        if b == 0:
            out += bytes([len(block) + 1]) + block
            block = bytearray()
        else:
            block.append(b)
            if len(block) == 254:
                out += b"\xff" + block
                block, full = bytearray(), True
    if not full:
        out += bytes([len(block) + 1]) + block
    return bytes(out) + b"\x00"


# the worked examples of the COBS article (Wikipedia), to check this implementation itself
assert cobs(b"\x00") == bytes.fromhex("01 01 00")
assert cobs(bytes.fromhex("11 22 00 33")) == bytes.fromhex("03 11 22 02 33 00")
assert cobs(bytes(range(1, 255))) == b"\xff" + bytes(range(1, 255)) + b"\x00"
assert cobs(bytes(range(0, 255))) == b"\x01\xff" + bytes(range(1, 255)) + b"\x00"
assert cobs(bytes(range(1, 256))) == b"\xff" + bytes(range(1, 255)) + b"\x02\xff\x00"
# a zero-free run of exactly 254 bytes followed by a zero: the full block implies no zero, so
# an empty block (code 01) stands for it
assert cobs(bytes(range(1, 255)) + b"\x00") == b"\xff" + bytes(range(1, 255)) + b"\x01\x01\x00"


def frame(msg_type, seq, payload):
    raw = struct.pack("<BBHH", 1, msg_type, seq, len(payload)) + payload
    crc = binascii.crc_hqx(raw, 0xFFFF)  # CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF
    return raw + struct.pack("<H", crc)


assert binascii.crc_hqx(b"123456789", 0xFFFF) == 0x29B1  # the published check value

EXAMPLES = [
    ("hello", 0x01, 0,
     struct.pack("<BBHH16s", 1, 2, 0x0001, 256, b"club-arm")),
    ("hello_ack", 0x02, 0,
     struct.pack("<BBBBBIQHB", 1, 2, 0, 2, 3, 1000, 1_500_000_000, 256, 16)),
    ("sensor_samples", 0x03, 42,
     struct.pack("<QB", 1_500_000_000, 2)
     + struct.pack("<BBBIIi", 0, 0x00, 0, 1500, 250_000, -1234)
     + struct.pack("<BBBIIf", 1, 0x01, 1, 750, 1_000_000, 0.5)),
    ("motor_command", 0x04, 7,
     struct.pack("<IB", 123456, 2) + struct.pack("<BBf", 0, 0, 1.25)
     + struct.pack("<BBf", 1, 1, -0.5)),
    ("heartbeat", 0x05, 3, struct.pack("<QQ", 2_000_000_000, 1_999_000_000)),
    ("status", 0x06, 9,
     struct.pack("<QI8I", 3_000_000_000, 0x0009, 1000, 2, 1, 3, 0, 0, 0, 5)),
    ("error", 0x07, 10,
     struct.pack("<HHB", 3, 7, 20) + b"joint 5 out of range"),
    ("step_request", 0x08, 11, struct.pack("<I", 10)),
    ("describe", 0x09, 12, struct.pack("<B", 0xFF)),
    ("sensor_info", 0x0A, 13,
     struct.pack("<BBBBIf", 0, 0, 0, 0, 8192, 1000.0) + struct.pack("<B", 5) + b"count"
     + struct.pack("<B", 19) + b"enc_base_yaw.counts" + struct.pack("<I", 1_000_000)),
    ("describe_joints", 0x09, 14, struct.pack("<BB", 0xFF, 1)),
    ("joint_info", 0x0B, 15,
     struct.pack("<BBBff", 0, 1, 0, -1.0, 1.0) + struct.pack("<B", 8) + b"base_yaw"
     + struct.pack("<B", 10) + b"base_motor"),
    ("request", 0x0C, 16, struct.pack("<B", 0)),
]

# COBS cases checked byte for byte in test_client_framing.c (input and wire bytes): zero-free
# runs of exactly 254·k bytes, at the end of the input and followed by a zero
RUN = bytes(range(1, 255))
COBS_EXAMPLES = [
    ("run254_end", RUN),
    ("run254_zero", RUN + b"\x00"),
    ("run508_zero_tail", RUN + RUN + b"\x00\x11"),
]

def doc_examples(text):
    """hex runs after 'frame:' / 'wire:' in the document, continuation lines joined"""
    found, current = [], None
    for line in text.splitlines():
        m = re.match(r"^(frame|wire):\s+([0-9a-f ]+)$", line)
        if m:
            current = [m.group(1), m.group(2).split()]
            found.append(current)
        elif current and re.match(r"^\s+[0-9a-f]{2}( [0-9a-f]{2})*$", line):
            current[1] += line.split()
        else:
            current = None
    return {(kind, bytes.fromhex("".join(h))) for kind, h in found}


def check(c_file, doc_file):
    c_text, doc = open(c_file).read(), doc_examples(open(doc_file).read())
    arrays = {m.group(1): bytes(int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]{2}", m.group(2)))
              for m in re.finditer(r"golden_(\w+)\[\] = \{([^}]*)\}", c_text)}
    bad = 0
    for name, t, seq, payload in EXAMPLES:
        raw = frame(t, seq, payload)
        wire = cobs(raw)
        if arrays.get(name) != wire:
            print(f"{c_file}: golden_{name} differs from the specification's bytes")
            bad += 1
        if ("frame", raw) not in doc or ("wire", wire) not in doc:
            print(f"{doc_file}: the {name} example differs from the specification's bytes")
            bad += 1
    print(f"{len(EXAMPLES)} examples, {bad} mismatches")
    return bad


def check_encoder(exe):
    """the frames the C encoder makes of the same messages (exe --print-golden) against the
    specification's bytes: the arrays above could agree with the document and still not be what
    the encoder sends"""
    out = subprocess.run([exe, "--print-golden"], capture_output=True, text=True, check=True)
    made = {}
    for line in out.stdout.splitlines():
        name, *hexes = line.split()
        made[name] = bytes(int(h, 16) for h in hexes)
    bad = 0
    for name, t, seq, payload in EXAMPLES:
        wire = cobs(frame(t, seq, payload))
        if made.get(name) != wire:
            got = made[name].hex(" ") if name in made else "nothing"
            print(f"{exe}: the C encoder's {name} frame differs from the specification's bytes:"
                  f"\n  encoder       {got}\n  specification {wire.hex(' ')}")
            bad += 1
    print(f"{len(EXAMPLES)} frames of the C encoder, {bad} mismatches")
    return bad


def check_cobs(c_file):
    """the COBS cases of test_client_framing.c: golden_cobs_NAME_in[] and _wire[]"""
    c_text = open(c_file).read()
    arrays = {m.group(1): bytes(int(x, 16) for x in re.findall(r"0x[0-9a-fA-F]{2}", m.group(2)))
              for m in re.finditer(r"golden_cobs_(\w+)\[\] = \{([^}]*)\}", c_text)}
    bad = 0
    for name, data in COBS_EXAMPLES:
        if arrays.get(name + "_in") != data or arrays.get(name + "_wire") != cobs(data):
            print(f"{c_file}: golden_cobs_{name} differs from the specification's bytes")
            bad += 1
    print(f"{len(COBS_EXAMPLES)} COBS cases, {bad} mismatches")
    return bad


def c_array(name, data):
    body = ",\n    ".join(", ".join("0x%02x" % b for b in data[i:i + 12])
                          for i in range(0, len(data), 12))
    return "static const uint8_t %s[] = {\n    %s};" % (name, body)


if __name__ == "__main__":
    if len(sys.argv) in (4, 6) and sys.argv[1] == "--check":
        bad = check(sys.argv[2], sys.argv[3])
        if len(sys.argv) == 6 and sys.argv[4] == "--encoder":
            bad += check_encoder(sys.argv[5])
        sys.exit(1 if bad else 0)
    if len(sys.argv) == 3 and sys.argv[1] == "--check-cobs":
        sys.exit(1 if check_cobs(sys.argv[2]) else 0)
    if len(sys.argv) == 2 and sys.argv[1] == "--cobs":
        for name, data in COBS_EXAMPLES:
            print(c_array(f"golden_cobs_{name}_in", data))
            print(c_array(f"golden_cobs_{name}_wire", cobs(data)))
        sys.exit(0)
    for name, t, seq, payload in EXAMPLES:
        raw = frame(t, seq, payload)
        wire = cobs(raw)
        print(f"{name}: frame {raw.hex(' ')}")
        print(f"{name}: wire  {wire.hex(' ')}")
        print("  static const uint8_t golden_%s[] = {%s};" %
              (name, ", ".join("0x%02x" % b for b in wire)))
