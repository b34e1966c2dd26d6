#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in OUT/<harness>/ from the reference data kept beside the
repository (recorded SDK traffic, Milagro's vectors) and the hand-written seeds in seeds/.
Nothing it writes is committed: `make fuzz` puts OUT under .build-fuzz.

usage: make-corpus.py SHARED_DIR OUT_DIR
"""
import hashlib, json, os, re, shutil, sys

shared, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
HARNESSES = ["json", "wire", "wiretext", "http", "g1", "g2", "scalar", "config"]
# The number of message types fuzzWire chooses from (Sources/MPinFuzz/Harnesses.swift).
WIRE_TYPES = 31


def put(harness, data):
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, harness, name), "wb") as f:
        f.write(data)


# Without the reference data the corpus is smaller, so say so once rather than quietly.
absent = [p for p in (os.path.join(shared, "fixtures", "recorded-http.json"), os.path.join(shared, "vectors"))
          if not os.path.exists(p)]
if absent:
    print("make-corpus: reference seeds skipped: %s not found (the reference data is kept beside the "
          "repository: ../shared, or make fuzz SHARED=DIR)" % " and ".join(absent))

for h in HARNESSES:
    os.makedirs(os.path.join(out, h), exist_ok=True)
    seeds = os.path.join(here, "seeds", h)
    if os.path.isdir(seeds):
        for name in os.listdir(seeds):
            with open(os.path.join(seeds, name), "rb") as f:
                put(h, f.read())

# Recorded traffic: each body is a JSON seed and, prefixed with every type selector, a wire
# seed; each response becomes a raw HTTP/1.1 reply, once with Content-Length, once chunked.
recorded = os.path.join(shared, "fixtures", "recorded-http.json")
if os.path.exists(recorded):
    with open(recorded) as f:
        exchanges = json.load(f)
    bodies = set()
    for ex in exchanges:
        for side in ("request", "response"):
            data = ex.get(side, {}).get("data") or ""
            if data:
                bodies.add(data)
        url = ex.get("request", {}).get("url") or ""
        put("wiretext", url.partition("?")[2])
        put("wiretext", url.rstrip("/").rpartition("/")[2].partition("?")[0])
        resp = ex.get("response", {})
        body = (resp.get("data") or "").encode()
        head = "HTTP/1.1 %d X\r\n" % resp.get("httpStatus", 200)
        for k, v in (resp.get("headers") or {}).items():
            if k.lower() not in ("content-length", "transfer-encoding"):
                head += "%s: %s\r\n" % (k, v)
        put("http", b"\x07\x00" + (head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body)
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 100]), body[i:i + 100]) for i in range(0, len(body), 100))
        put("http", b"\x00\x01" + (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + chunked + b"0\r\n\r\n")
    for body in bodies:
        put("json", body)
        for selector in range(WIRE_TYPES):
            put("wire", bytes([selector]) + body.encode())

# Vectors: every hex string, sorted by length into the decoder it fits.
lengths = {65: "g1", 33: "g1", 128: "g2", 32: "scalar", 384: "scalar"}
vectors = os.path.join(shared, "vectors")
if os.path.isdir(vectors):
    for name in sorted(os.listdir(vectors)):
        with open(os.path.join(vectors, name)) as f:
            text = f.read()
        for token in set(re.findall(r"[0-9a-fA-F]{64,}", text)):
            if len(token) % 2 == 0 and len(token) // 2 in lengths:
                put(lengths[len(token) // 2], bytes.fromhex(token))
        if name.endswith(".json") and len(text) < 64 * 1024:
            put("json", text)

for h in HARNESSES:
    print("%-7s %d seeds" % (h, len(os.listdir(os.path.join(out, h)))))
