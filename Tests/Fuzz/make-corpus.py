#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in OUT/<harness>/ from the reference data kept beside the
repository (recorded SDK traffic, Milagro's vectors) and the hand-written seeds in seeds/.
Nothing it writes is committed: `make fuzz` puts OUT under .build-fuzz.

For the `server` harness it first checks that its route table (Sources/MPinFuzzServer/
RouteTable.swift) lists exactly the routes Sources/MPinServer declares, and stops otherwise.

usage: make-corpus.py SHARED_DIR OUT_DIR
"""
import hashlib, json, os, re, shutil, struct, sys

shared, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
HARNESSES = ["json", "wire", "wiretext", "http", "g1", "g2", "scalar", "config", "server", "module"]
# The number of message types fuzzWire chooses from: the entries of `wireTypes` in
# Sources/MPinFuzz/Harnesses.swift (a fixed 31 here once left the last seven without seeds).
with open(os.path.join(here, "..", "..", "Sources", "MPinFuzz", "Harnesses.swift")) as f:
    WIRE_TYPES = len(re.findall(r"WireType\([A-Z][A-Za-z0-9<>]*\.self\)", f.read()))


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


# The server harness: its route table, checked against the routes the server declares.
repo = os.path.dirname(os.path.dirname(here))
with open(os.path.join(repo, "Sources", "MPinFuzzServer", "RouteTable.swift")) as f:
    table = [(m.group(1), tuple(sorted(re.findall(r"\.(\w+)", m.group(2)))))
             for m in re.finditer(r'^\s*FuzzRoute\("([^"]*)"((?:, \.\w+)+)\),', f.read(), re.M)]


def declared_routes():
    """(path, methods) of every `endpoint(...)` and `router.get(...)` in Sources/MPinServer, with
    the prefix ServerRoutes.swift mounts it under: the D-TA's under dta/, the RPS's public and
    the OpenID provider's prefix routes under rps/, the rest at the root; a path that names the
    prefix itself (`"\(prefix)/pass1"`, LoginRoutes.swift) under rps/ too."""
    found = set()
    server_dir = os.path.join(repo, "Sources", "MPinServer")
    for root, _, files in os.walk(server_dir):
        for name in files:
            if not name.endswith(".swift"):
                continue
            prefix = ""
            with open(os.path.join(root, name)) as f:
                for line in f:
                    func = re.search(r"func (\w+)<", line)
                    if func:
                        prefix = "dta/" if name == "DTARoutes.swift" else \
                            "rps/" if func.group(1) in ("publicRoutes", "prefixRoutes") else ""
                    m = re.search(r'\.endpoint\("([^"]*)"((?:, \.\w+)+)', line)
                    if m:
                        path = prefix + m.group(1).replace("\\(prefix)/", "rps/")
                        found.add((path, tuple(sorted(re.findall(r"\.(\w+)", m.group(2))))))
                    m = re.search(r'router\.(get|post|put|delete)\("([^"]*)"', line)
                    if m:
                        found.add((m.group(2), (m.group(1),)))
    return found


declared = declared_routes()
if declared != set(table):
    print("make-corpus: the server harness's route table (Sources/MPinFuzzServer/RouteTable.swift) "
          "differs from the routes Sources/MPinServer declares:")
    for path, methods in sorted(declared - set(table)):
        print("  missing from the table: %s %s" % (" ".join(methods), path))
    for path, methods in sorted(set(table) - declared):
        print("  not declared by the server: %s %s" % (" ".join(methods), path))
    sys.exit(1)


def server_seed(pattern, method_byte, parameter="", query="", headers=(), body=b""):
    """A seed in the layout of Sources/MPinFuzzServer/FuzzRequest.swift."""
    index = [p for p, _ in table].index(pattern)
    text = "%s\n%s\n%s\n" % (parameter, query, "".join("%s\n" % h for h in headers))
    return bytes([index, method_byte]) + text.encode() + (body if isinstance(body, bytes) else body.encode())


def route_for(path):
    """The table's pattern a recorded path is served by, and its path parameter; the D-TA's
    /v3/ paths are the embedded D-TA's dta/ ones. None for what the server does not serve."""
    segments = path.strip("/").split("/")
    if segments[:1] == ["v3"]:
        segments = ["dta"] + segments[1:]
    for pattern, _ in table:
        parts = pattern.split("/")
        if len(parts) == len(segments) and all(p.startswith(":") or p == s for p, s in zip(parts, segments)):
            return pattern, next((s for p, s in zip(parts, segments) if p.startswith(":")), "")
    return None


# Every route, with each of its methods and as an OPTIONS preflight, empty.
for pattern, methods in table:
    parameter = "x" if ":" in pattern else ""
    for i in range(len(methods)):
        put("server", server_seed(pattern, i, parameter))
    put("server", server_seed(pattern, 0x86, parameter))
# The OpenID provider's flow (docs/MFA.md §3-§7), reaching past the client check with the
# harness's registered app ($CLIENT_ID).
authorize = "response_type=code&client_id=$CLIENT_ID&redirect_uri=https%3A%2F%2F127.0.0.1%2Fcallback&scope=openid&state=s1&nonce=n1"
put("server", server_seed("authorize", 0, query=authorize))
put("server", server_seed("authorize", 1, headers=["Content-Type: application/x-www-form-urlencoded"], body=authorize))
put("server", server_seed("oidc/token", 0, headers=["Content-Type: application/x-www-form-urlencoded"],
                          body="grant_type=authorization_code&code=c0de&redirect_uri=https%3A%2F%2F127.0.0.1%2Fcallback"
                               "&client_id=$CLIENT_ID&client_secret=s3cret"))
put("server", server_seed("authorize/status", 0, headers=["Content-Type: application/json"],
                          body='{"webOTT":"0123456789abcdef0123","wid":"abc"}'))
put("server", server_seed("rps/codeStatus", 0, headers=["Content-Type: application/json"],
                          body='{"status":"wid","wid":"0123456789abcdef"}'))
put("server", server_seed("service", 0, query="client_id=$CLIENT_ID"))
if os.path.exists(recorded):
    for ex in exchanges:
        req = ex.get("request", {})
        url = req.get("url") or ""
        path, _, query = url.partition("://")[2].partition("/")[2].partition("?")
        found = route_for(path)
        if not found:
            continue
        pattern, parameter = found
        methods = dict(table)[pattern]
        method = (req.get("method") or "GET").lower()
        method_byte = methods.index(method) if method in methods else 0x80 + \
            ["get", "head", "post", "put", "delete", "patch", "options", "trace"].index(method)
        body = req.get("data") or ""
        put("server", server_seed(pattern, method_byte, parameter, query, body=body))
        if body:
            put("server", server_seed(pattern, method_byte, parameter, query,
                                      headers=["Content-Type: application/json; charset=UTF-8"], body=body))

# The module harness: what a helper sends pam_mpin.so (Sources/CPAMProtocol/mpin_pam_protocol.h),
# a login's frames in order, each alone, and the edges (the largest payload and budget, one more).
def module_frame(kind, payload):
    return kind + struct.pack(">I", len(payload)) + payload


login = [module_frame(b"W", struct.pack(">I", 10000)), module_frame(b"I", b"\x02"), module_frame(b"L", b"\x06user=alice outcome=OK"),
         module_frame(b"C", b"\x01M-Pin PIN: "), module_frame(b"C", b"\x03Wrong PIN."), module_frame(b"E", b"\x00")]
put("module", b"".join(login))
for frame in login:
    put("module", frame)
put("module", module_frame(b"W", struct.pack(">I", 960000)) + module_frame(b"W", struct.pack(">I", 960001)))
put("module", b"L" + struct.pack(">I", 16384) + b"\x03" + b"x" * 16383)
put("module", b"L" + struct.pack(">I", 16385) + b"\x03")

for h in HARNESSES:
    print("%-7s %d seeds" % (h, len(os.listdir(os.path.join(out, h)))))
