#!/usr/bin/env python3
"""bedrock-frames.py: write AWS event-stream bytes (Amazon Bedrock's
ConverseStream answer) from a text description, for the tests.

  bedrock-frames.py IN.events OUT.es

IN: one frame a line, "TYPE PAYLOAD": an event (:message-type event,
:event-type TYPE, :content-type application/json) whose payload is the
rest of the line; TYPE starting with '!' an exception (:message-type
exception, :exception-type TYPE without the '!').  Blank lines and lines
starting with '#' are skipped.  The CRCs are zlib's crc32, computed here
independently of lib/llm-eventstream.c.
"""
import struct
import sys
import zlib


def header(name, value):
    n = name.encode()
    v = value.encode()
    return bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v


def frame(line):
    typ, _, payload = line.partition(" ")
    exc = typ.startswith("!")
    h = header(":message-type", "exception" if exc else "event")
    h += header(":exception-type" if exc else ":event-type",
                typ[1:] if exc else typ)
    h += header(":content-type", "application/json")
    p = payload.encode()
    total = 16 + len(h) + len(p)
    pre = struct.pack(">II", total, len(h))
    pre += struct.pack(">I", zlib.crc32(pre))
    msg = pre + h + p
    return msg + struct.pack(">I", zlib.crc32(msg))


def main():
    out = b""
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                out += frame(line)
    with open(sys.argv[2], "wb") as f:
        f.write(out)


main()
