#!/usr/bin/env python3
"""An impostor on the backend's address (docs/SECURITY.md §6.1): what a local user who binds the
port while mpin-server is down can run. It answers every step of a token-mode and a device-mode
login as a real server would answer a right PIN: valid points as time permits, a y for pass 1, an
authOTT for pass 2, HTTP 200 for the final step, an access number, a poll that says "approved"
and a verdict naming the expected identity. It holds no server secret, so it cannot sign.

    fake-backend.py PORT LOG CLIENT_SETTINGS_JSON IDENTITY [MODE]

MODE: "ok" (default) answers the final step with 200; "blocked" answers it with 410 (an impostor
that tries to make the host delete its token); "badsig" adds a verdictSignature of the right
length made with no key at all. docs/SECURITY.md §3: "wrongpin" answers the final step with an unsigned
401 and marks its client settings ("heldPort": true), so that a host which kept them shows it;
"redirect" does the same with settings whose URLs are absolute on port $FAKE_REDIRECT_PORT (the
impostor's own, from which he would relay the host's logins to the real server); "revoked"
answers the time permit with an unsigned 410. Every request's method and path go to LOG, one
per line.
127.0.0.1 only; it runs until killed.
"""
import http.server
import json
import os
import sys

PORT, LOG, SETTINGS, IDENTITY = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
MODE = sys.argv[5] if len(sys.argv) > 5 else "ok"

# BN254CX's G1 generator (-1, 1), a valid point for the time-permit shares.
P = 0x2400000008702A0DB0BDDF647A6366D3243FD6EE18093EE1BE6623EF5C1B55B3
G1 = "04" + format(P - 1, "064x") + format(1, "064x")


def random_hex(n):
    return os.urandom(n).hex()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def route(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.split("?")[0]
        with open(LOG, "a") as log:
            log.write(f"{self.command} {path}\n")
        if path.endswith("/clientSettings"):
            with open(SETTINGS) as f:
                settings = json.load(f)
            if MODE in ("wrongpin", "redirect"):
                settings["heldPort"] = True
            if MODE == "redirect":
                elsewhere = "http://127.0.0.1:" + os.environ["FAKE_REDIRECT_PORT"]
                settings = {k: (elsewhere + v if isinstance(v, str) and v.startswith("/") else v)
                            for k, v in settings.items()}
            return self.answer(200, settings)
        if "/timePermit/" in path and MODE == "revoked":
            return self.answer(410, {"message": "Time permit refused"})
        if "/timePermit/" in path:
            mpin_id = path.rsplit("/", 1)[1]
            import hashlib
            storage_id = hashlib.sha256(bytes.fromhex(mpin_id)).hexdigest()
            return self.answer(200, {"date": 20000, "timePermit": G1, "signature": random_hex(32), "storageId": storage_id})
        if path.endswith("/timePermit"):
            return self.answer(200, {"timePermit": G1})
        if path.endswith("/pass1"):
            return self.answer(200, {"y": "00" + random_hex(31), "pass": 1, "message": "OK", "version": "0.3"})
        if path.endswith("/pass2"):
            return self.answer(200, {"authOTT": random_hex(16), "pass": 2, "version": "0.3"})
        if path == "/mpinAuthenticate":
            if MODE == "blocked":
                return self.answer(410, {"someUserData": "Authentication failed"})
            if MODE in ("wrongpin", "redirect"):
                return self.answer(401, {"someUserData": "Authentication failed"})
            body = {"someUserData": "This will be handled by onSuccessLogin handler."}
            if MODE == "badsig":
                body["verdictSignature"] = G1 + random_hex(32)
            return self.answer(200, body)
        if path.endswith("/getAccessNumber"):
            return self.answer(200, {"accessNumber": "1234567", "webOTT": random_hex(16), "ttlSeconds": 60,
                                     "localTimeStart": 0, "localTimeEnd": 60000})
        if path.endswith("/accessnumber"):
            return self.answer(200, {"authOTT": random_hex(16)})
        if path == "/authenticate":
            body = {"userId": IDENTITY, "mpinId": random_hex(40), "status": 200, "message": "Authentication successful"}
            if MODE == "badsig":
                body["verdictSignature"] = G1 + random_hex(32)
            return self.answer(200, body)
        return self.answer(200, {})

    do_GET = route
    do_POST = route
    do_PUT = route


http.server.HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
