# SPDX-License-Identifier: Apache-2.0
"""Protocol Buffers' wire format by hand, for the driver's Python test
programs (driver/grpc/tests/wire_check.py, driver/podresources/tests/
fake_podresources.py): they encode and decode from the field numbers of
the kubelet's APIs, independently of our .proto files and C code.
"""

VARINT, LEN = 0, 2


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, value):
    """Encodes one field: int -> varint, bytes/str -> length-delimited."""
    if isinstance(value, int):
        return varint(num << 3 | VARINT) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | LEN) + varint(len(value)) + value


def read_varint(buf, i):
    """The varint at buf[i], and the index after it: at most ten bytes."""
    result = 0
    for shift in range(0, 70, 7):
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
    raise AssertionError(f"a varint longer than ten bytes before {i}")


def parse(buf):
    """Returns [(field number, wire type, value)]; LEN values stay bytes."""
    fields, i = [], 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == VARINT:
            v, i = read_varint(buf, i)
        elif wt == LEN:
            n, i = read_varint(buf, i)
            v = bytes(buf[i:i + n])
            i += n
        else:
            raise AssertionError(f"unexpected wire type {wt} for field {num}")
        fields.append((num, wt, v))
    return fields
