#!/usr/bin/env python3
"""A relay that holds the backend's port and forwards to the real server on another, rewriting
what an attacker in that place would (someone who held the port during a restart):

  rewrite-relay.py LISTEN_PORT UPSTREAM_PORT MODE

MODE attempts: adds attemptsLeft=1 to every 401 (a count the server did not sign).
MODE report:   changes the first offline login of the final step's offlineLogins, and adds an
               unsigned "offlineLoginsRecorded" to the answer (an acknowledgment it made up).
MODE nonce:    replaces pass 2's verdictNonce with the hash of a report of its own and sends that
               report in the final step (docs/PROTOCOL.md §4.5.2).
Prints one line per rewrite. 127.0.0.1 only; the test kills it.
"""
import hashlib, http.server, json, os, sys, time, urllib.error, urllib.request

listen, upstream, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
salt = os.urandom(32)
forged = {"host": "forged", "salt": salt.hex(),
          "logins": [{"time": int(time.time()), "service": "forged", "outcome": "OK", "id": os.urandom(8).hex()}]}
bound = "mpin-offline-report-v1\nhost forged\n" + "".join(
    f"login {l['time']} {l['service']} {l['outcome']} {l['id']}\n" for l in forged["logins"])


class Relay(http.server.BaseHTTPRequestHandler):
    def forward(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if self.command == "POST" else None
        if body and self.path.endswith("/pass2") and mode == "nonce":
            doc = json.loads(body)
            doc["verdictNonce"] = hashlib.sha256(salt + bound.encode()).hexdigest()
            body = json.dumps(doc).encode()
            print("rewrote the nonce", flush=True)
        if body and self.path.endswith("/mpinAuthenticate") and mode in ("report", "nonce"):
            doc = json.loads(body)
            if "offlineLogins" in doc:
                if mode == "nonce":
                    doc["offlineLogins"] = forged
                else:
                    doc["offlineLogins"]["logins"][0]["service"] = "forged"
                body = json.dumps(doc).encode()
                print("rewrote the report", flush=True)
        req = urllib.request.Request(f"http://127.0.0.1:{upstream}{self.path}", data=body, method=self.command,
                                     headers={k: v for k, v in self.headers.items() if k.lower() == "content-type"})
        try:
            with urllib.request.urlopen(req) as r:
                status, data = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, data = e.code, e.read()
        if status == 200 and mode == "report" and self.path.endswith("/mpinAuthenticate"):
            doc = json.loads(data)
            doc["offlineLoginsRecorded"] = 1
            data = json.dumps(doc).encode()
            print("added an unsigned acknowledgment", flush=True)
        if status == 401 and mode == "attempts":
            try:
                doc = json.loads(data)
                doc["attemptsLeft"] = 1
                data = json.dumps(doc).encode()
                print("rewrote attemptsLeft", flush=True)
            except ValueError:
                pass
        # The client settings name the server's own port: the relay's goes in its place.
        data = data.replace(b"127.0.0.1:%d" % upstream, b"127.0.0.1:%d" % listen)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = forward

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", listen), Relay).serve_forever()
