#!/usr/bin/python3
"""A real browser through mpin-server's web login (docs/MFA.md §5), run by weblogin-tests.sh.

A small relying party (this process, 127.0.0.1:--rp-port) uses Debian's python3-authlib for the
OpenID Connect parts: the authorization URL with PKCE, the callback's state check, and the ID
token's validation (signature against the provider's JWKS, iss, aud, exp, iat, nonce) with the
algorithm the client was registered with. Headless Chromium (Debian's chromium), driven over
the DevTools protocol (python3-websocket), starts at the relying party, is redirected to
/authorize, and the test reads the login code from the rendered page (the DOM, not the HTML
source), runs `mpin approve`, and waits for the browser to land on the callback. Then a
refused login (`mpin refuse`) and an expired one show their states, and "Start again" makes a
new login. Screenshots of each state go to --artifacts (not committed).

Exits 0 when every check passed; prints one line per check.
"""
import argparse
import base64
import http.server
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import websocket
from authlib.common.security import generate_token
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.oauth2.rfc6749.parameters import parse_authorization_code_response, prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken

FAILED = []


def check(description, condition, detail=""):
    print(("ok - " if condition else "not ok - ") + description + ("" if condition or not detail else ": " + str(detail)))
    if not condition:
        FAILED.append(description)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class RelyingParty:
    """The client: one registered application per ID token algorithm."""

    def __init__(self, backend, port, clients):
        self.backend = backend
        self.redirect_uri = "http://127.0.0.1:%d/callback" % port
        self.clients = clients  # name -> (client_id, client_secret, alg)
        with urllib.request.urlopen(backend + "/.well-known/openid-configuration", timeout=10) as r:
            self.discovery = json.load(r)
        with urllib.request.urlopen(self.discovery["jwks_uri"], timeout=10) as r:
            self.keys = JsonWebKey.import_key_set(json.load(r))
        self.pending = {}  # state -> (client name, auth method, nonce, verifier)
        self.results = []  # (state, outcome text)

    def login_url(self, client, auth):
        client_id = self.clients[client][0]
        state, nonce, verifier = generate_token(24), generate_token(24), generate_token(48)
        self.pending[state] = (client, auth, nonce, verifier)
        return prepare_grant_uri(self.discovery["authorization_endpoint"], client_id, "code",
                                 redirect_uri=self.redirect_uri, scope="openid email", state=state, nonce=nonce,
                                 code_challenge=create_s256_code_challenge(verifier), code_challenge_method="S256")

    def callback(self, url):
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        state = query.get("state", "")
        if state not in self.pending:
            return "Login failed: unknown state"
        client, auth, nonce, verifier = self.pending.pop(state)
        client_id, secret, alg = self.clients[client]
        if "error" in query:
            return "Login failed: " + query["error"]
        params = parse_authorization_code_response(url, state=state)  # raises on a state mismatch
        form = {"grant_type": "authorization_code", "code": params["code"], "redirect_uri": self.redirect_uri,
                "code_verifier": verifier}
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if auth == "client_secret_basic":
            pair = "%s:%s" % (urllib.parse.quote(client_id, safe=""), urllib.parse.quote(secret, safe=""))
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form.update(client_id=client_id, client_secret=secret)
        request = urllib.request.Request(self.discovery["token_endpoint"], data=urllib.parse.urlencode(form).encode(),
                                         headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=10) as r:
            tokens = json.load(r)
        header = json.loads(base64.urlsafe_b64decode(tokens["id_token"].split(".")[0] + "=="))
        if header.get("alg") != alg:
            return "Login failed: the ID token is %s, the client was registered for %s" % (header.get("alg"), alg)
        claims = JsonWebToken([alg]).decode(
            tokens["id_token"], self.keys, claims_cls=CodeIDToken,
            claims_options={"iss": {"essential": True, "value": self.discovery["issuer"]}},
            claims_params={"nonce": nonce, "client_id": client_id})
        claims.validate(leeway=5)
        return "Logged in as %s (%s, %s)" % (claims["email"], alg, auth)

    def serve(self, port):
        rp = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, headers, body=b""):
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(path.query))
                if path.path == "/login":
                    self.reply(302, {"Location": rp.login_url(q.get("client", "rs"), q.get("auth", "client_secret_basic"))})
                elif path.path == "/callback":
                    try:
                        text = rp.callback(rp.redirect_uri + "?" + path.query)
                    except Exception as e:  # any validation failure is the test's failure
                        text = "Login failed: %s: %s" % (type(e).__name__, e)
                    rp.results.append(text)
                    body = ('<!doctype html><title>RP</title><h1 id="result">%s</h1>' % text).encode()
                    self.reply(200, {"Content-Type": "text/html; charset=utf-8"}, body)
                else:
                    self.reply(404, {})

        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def refusals(rp, backend):
    """What a relying party sees of the provider's refusals: errors of a known client come back
    to its redirect URI (the request built by Authlib) with its state; an unregistered
    redirect URI is never redirected to; client authentication, token and userinfo headers."""
    opener = urllib.request.build_opener(NoRedirect)

    def get(url, headers=None):
        try:
            with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    cases = [("prompt=none", {"prompt": "none"}, "login_required"),
             ("a request object", {"request": "eyJhbGciOiJub25lIn0.e30."}, "request_not_supported"),
             ("response_type=token", {"response_type": "token"}, "unsupported_response_type"),
             ("a scope without openid", {"scope": "email"}, "invalid_scope")]
    for what, change, error in cases:
        url = rp.login_url("rs", "client_secret_basic")
        parts = urllib.parse.urlsplit(url)
        query = dict(urllib.parse.parse_qsl(parts.query))
        state = query["state"]
        query.update(change)
        status, headers, _ = get(parts._replace(query=urllib.parse.urlencode(query)).geturl())
        location = headers.get("Location", "")
        back = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
        check("%s: redirected to the client with %s and its state" % (what, error),
              status == 302 and location.startswith(rp.redirect_uri + "?") and back.get("error") == error
              and back.get("state") == state and back.get("error_description") and "code" not in back, (status, location))
        rp.pending.pop(state, None)
    url = rp.login_url("rs", "client_secret_basic")
    evil = url.replace(urllib.parse.quote(rp.redirect_uri, safe=""), urllib.parse.quote("http://evil.example/cb", safe=""))
    status, headers, _ = get(evil + "&prompt=none")
    check("an unregistered redirect URI is answered with an error, never redirected", status == 400 and "Location" not in headers,
          (status, headers.get("Location")))
    request = urllib.request.Request(rp.discovery["token_endpoint"], method="POST", data=b"grant_type=authorization_code&code=x"
                                     b"&redirect_uri=x&code_verifier=" + b"a" * 43,
                                     headers={"Authorization": "Basic " + base64.b64encode(
                                         (rp.clients["rs"][0] + ":wrong").encode()).decode(),
                                              "Content-Type": "application/x-www-form-urlencoded"})
    try:
        urllib.request.urlopen(request, timeout=10)
        check("a wrong client secret is refused", False)
    except urllib.error.HTTPError as e:
        check("a wrong client secret: 401 invalid_client with WWW-Authenticate, no-store and no-cache",
              e.code == 401 and json.load(e).get("error") == "invalid_client"
              and e.headers.get("WWW-Authenticate", "").startswith("Basic")
              and e.headers.get("Cache-Control") == "no-store" and e.headers.get("Pragma") == "no-cache", dict(e.headers))
    status, headers, _ = get(rp.discovery["userinfo_endpoint"], {"Authorization": "Bearer made-up"})
    check("userinfo refuses an unknown token with a Bearer challenge",
          status == 401 and 'error="invalid_token"' in headers.get("WWW-Authenticate", ""), (status, headers))
    check("discovery announces RS256 and ES256 and the userinfo endpoint",
          {"RS256", "ES256"} <= set(rp.discovery["id_token_signing_alg_values_supported"])
          and rp.discovery["userinfo_endpoint"] == backend + "/oidc/userinfo", rp.discovery)


class Browser:
    """Headless Chromium over the DevTools protocol."""

    def __init__(self, work, artifacts):
        self.port = free_port()
        self.profile = os.path.join(work, "chromium-profile")
        self.artifacts = artifacts
        self.process = subprocess.Popen(
            ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=%d" % self.port, "--user-data-dir=" + self.profile, "--window-size=1280,900",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 30
        target = None
        while time.time() < deadline and target is None:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % self.port, timeout=2) as r:
                    target = next((t for t in json.load(r) if t.get("type") == "page"), None)
            except OSError:
                time.sleep(0.2)
        if target is None:
            raise RuntimeError("chromium did not start")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.console = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Log.enable")

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if message.get("method") == "Log.entryAdded":
                self.console.append(message["params"]["entry"].get("text", ""))
            if message.get("method") == "Runtime.exceptionThrown":
                self.console.append(json.dumps(message["params"]["exceptionDetails"])[:300])

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def page(self):
        """What the rendered page shows: location, title, and the login page's elements."""
        return self.evaluate("""JSON.stringify((function () {
            function text(id) { var e = document.getElementById(id); return e ? e.innerText : null; }
            var s = document.getElementById("status"), again = document.getElementById("again");
            return {url: location.href, app: text("app"), code: text("code"), status: text("status"),
                    state: s ? s.getAttribute("data-state") : null, result: text("result"),
                    again: again ? !again.hidden : null,
                    qr: !!document.querySelector(".qr svg path"), qrHeight: (function () {
                        var q = document.querySelector(".qr svg"); return q ? q.getBoundingClientRect().width : 0; })(),
                    overflow: document.documentElement.scrollWidth > window.innerWidth};
        })())""")

    def wait(self, predicate, seconds, what):
        deadline = time.time() + seconds
        last = None
        while time.time() < deadline:
            raw = self.page()
            last = json.loads(raw) if raw else None
            if last and predicate(last):
                return last
            time.sleep(0.25)
        raise RuntimeError("timed out waiting for %s; the page showed %s" % (what, last))

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def screenshot(self, name, width=1280, height=900, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        time.sleep(0.3)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(os.path.join(self.artifacts, name), "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        except Exception:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except Exception:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    a = argparse.ArgumentParser()
    for name in ["backend", "client-id", "client-secret", "mpin", "store", "pin", "artifacts", "work", "server-data"]:
        a.add_argument("--" + name, required=True)
    a.add_argument("--rp-port", type=int, required=True)
    a.add_argument("--expiry-seconds", type=int, default=20)
    args = a.parse_args()

    # A second application, registered for ES256 ID tokens.
    server_bin = os.path.join(os.path.dirname(args.mpin), "mpin-server")
    out = subprocess.run([server_bin, "app", "add", "Legacy Wiki", "--redirect-uri",
                          "http://127.0.0.1:%d/callback" % args.rp_port, "--id-token-alg", "ES256",
                          "--data", args.server_data], capture_output=True, text=True, check=True).stdout
    es = dict(line.split(": ", 1) for line in out.strip().splitlines())
    rp = RelyingParty(args.backend, args.rp_port, {
        "rs": (args.client_id, args.client_secret, "RS256"),
        "es": (es["client_id"], es["client_secret"], "ES256")})
    httpd = rp.serve(args.rp_port)
    try:
        refusals(rp, args.backend)
    except Exception as e:
        check("the refusal checks completed", False, "%s: %s" % (type(e).__name__, e))
    browser = Browser(args.work, args.artifacts)
    start = "http://127.0.0.1:%d/login" % args.rp_port

    def mpin(*argv, stdin=""):
        return subprocess.run([args.mpin, argv[0], "--store", args.store] + list(argv[1:]), input=stdin,
                              capture_output=True, text=True, timeout=60)

    try:
        for client, auth, app in [("rs", "client_secret_basic", "Team Wiki"), ("es", "client_secret_post", "Legacy Wiki")]:
            browser.navigate(start + "?client=%s&auth=%s" % (client, auth))
            shown = browser.wait(lambda p: p.get("code"), 20, "the login page")
            code = shown["code"].replace(" ", "")
            check("%s: the browser went from the relying party to the login page of %s" % (auth, app),
                  shown["url"].startswith(args.backend + "/authorize?") and shown["app"] == app, shown)
            check("%s: the page shows a QR code, a 7-digit code and waits" % auth,
                  shown["qr"] and len(code) == 7 and code.isdigit() and shown["state"] == "waiting"
                  and "Time left" in shown["status"], shown)
            if client == "rs":
                browser.screenshot("waiting-phone.png", width=390, height=844, mobile=True)
                phone = json.loads(browser.page())
                check("on a phone-sized window nothing overflows and the QR code stays readable",
                      not phone["overflow"] and phone["qrHeight"] >= 180, phone)
                browser.screenshot("waiting-desktop.png")
                for shot in ["waiting-desktop.png", "waiting-phone.png"]:
                    scanned = subprocess.run(["zbarimg", "--quiet", "--raw", os.path.join(args.artifacts, shot)],
                                             capture_output=True, text=True).stdout.strip()
                    check("the QR code on the screen (%s) scans as the login code" % shot, scanned == code, scanned)
            done = mpin("approve", code, "--pin-stdin", stdin=args.pin + "\n")
            check("%s: mpin approve with the code read from the page" % auth,
                  done.returncode == 0 and "web login to %s from browser 127.0.0.1" % app in done.stdout, done.stdout + done.stderr)
            landed = browser.wait(lambda p: p.get("result"), 20, "the relying party's callback")
            check("%s: the browser landed on the callback, which validated the %s ID token" % (auth, rp.clients[client][2]),
                  landed["result"] == "Logged in as alice@example.org (%s, %s)" % (rp.clients[client][2], auth), landed)
            if client == "rs":
                browser.screenshot("approved-callback.png")

        # Refused on the device.
        browser.navigate(start)
        shown = browser.wait(lambda p: p.get("code"), 20, "the login page")
        refused = mpin("refuse", shown["code"])
        check("mpin refuse", refused.returncode == 0, refused.stdout + refused.stderr)
        page = browser.wait(lambda p: p.get("state") == "refused", 10, "the refused state")
        check("the page shows the login refused, with a way to start again, and no code any more",
              "Refused" in page["status"] and page["again"] and not browser.evaluate(
                  'document.getElementById("codes").getClientRects().length'), page)
        browser.screenshot("refused.png")

        # Expired: nobody approves.
        browser.navigate(start)
        shown = browser.wait(lambda p: p.get("code"), 20, "the login page")
        page = browser.wait(lambda p: p.get("state") == "expired", args.expiry_seconds + 15, "the expired state")
        check("the page shows the login expired, with a way to start again", "Expired" in page["status"] and page["again"], page)
        browser.screenshot("expired.png")
        late = mpin("approve", shown["code"].replace(" ", ""), "--pin-stdin", stdin=args.pin + "\n")
        check("an expired login cannot be approved", late.returncode != 0, late.stdout)
        browser.evaluate('document.getElementById("again-link").click()')
        again = browser.wait(lambda p: p.get("code") and p.get("state") == "waiting" and p["code"] != shown["code"], 20,
                             "a new login after Start again")
        check("Start again makes a new login with a new code", again["code"] != shown["code"], again)

        violations = [m for m in browser.console if "Content Security Policy" in m or "Refused to" in m]
        check("no Content-Security-Policy violation and no script error in the console", not violations, violations[:3])
    except Exception as e:
        check("the browser run completed", False, "%s: %s" % (type(e).__name__, e))
    finally:
        browser.close()
        httpd.shutdown()
    print("screenshots in " + args.artifacts)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
