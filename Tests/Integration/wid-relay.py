#!/usr/bin/env python3
"""A relay between a host and the real mpin-server (docs/SECURITY.md §2): what a local user who
holds the backend's port, or whose port the host's kept settings name, can run. It passes every
request on to the real server, except that it writes the access number in CODE_FILE into pass
2's WID and takes the final step to the device endpoint (`/rps/authenticate`), answering the
host "wrong PIN" at once. With the old server the user's right PIN then approved the waiting
login the relay's owner started; a host registration must approve nothing but its host's login.

    wid-relay.py PORT REAL_PORT CODE_FILE LOG

Every request goes to LOG as "METHOD PATH -> STATUS" (and "rewrote WID" when it did). 127.0.0.1
only; it runs until killed.
"""
import http.client
import http.server
import json
import sys
import threading

PORT, REAL_PORT, CODE_FILE, LOG = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]


def forward(method, path, body, headers):
    conn = http.client.HTTPConnection("127.0.0.1", REAL_PORT, timeout=30)
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def note(line):
    with open(LOG, "a") as log:
        log.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def route(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {"Content-Type": "application/json"} if body is not None else {}
        path = self.path
        if path.endswith("/pass2") and body:
            doc = json.loads(body)
            with open(CODE_FILE) as f:
                doc["WID"] = f.read().strip()
            body = json.dumps(doc).encode()
            note("rewrote WID")
        if path == "/mpinAuthenticate" and body:
            # The device endpoint waits for the browser: send it in the background.
            threading.Thread(target=lambda: note("POST /rps/authenticate (relayed) -> %d"
                                                 % forward("POST", "/rps/authenticate", body, headers)[0]),
                             daemon=True).start()
            note("POST /mpinAuthenticate -> 401 (made up)")
            return self.reply(401, b'{"message": "Wrong PIN."}')
        status, data = forward(self.command, path, body, headers)
        note("%s %s -> %d" % (self.command, path.split("?")[0], status))
        return self.reply(status, data)

    do_GET = route
    do_POST = route
    do_PUT = route


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
