#!/usr/bin/env bash
# A web login of mpin-server's OpenID provider finished with the `mpin` command (docs/MFA.md
# §5.4): the login page's short code and its M-Pin app link, `mpin approve` (what asks, a wrong
# PIN counted, the approval), `mpin refuse`, and the code flow's end (token, ID token verified
# by python3-jwcrypto, userinfo). Needs the release builds of mpin and mpin-server; no root.
# With Debian's chromium installed, Tests/OIDC/browser-login.py then drives a real browser
# through the page (make test-weblogin, which requires it).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
PY=/usr/bin/python3

# Logins expire after 20 s here, so that the browser sees one expire.
PORT=$(free_port)
"$BIN/mpin-server" init --data "$WORK/server" --auto-activate >/dev/null || exit 1
"$PY" - "$WORK/server/config.json" <<'PY' || exit 1
import json, sys
c = json.load(open(sys.argv[1])); c["mfaSettings"] = {"accessCodeTTLSeconds": 20}
json.dump(c, open(sys.argv[1], "w"))
PY
restart_server || exit 1
RPPORT=$(free_port)
REDIRECT="http://127.0.0.1:$RPPORT/callback"
"$BIN/mpin-server" app add "Team Wiki" --redirect-uri "$REDIRECT" --data "$WORK/server" > "$WORK/app.out" || exit 1
CLIENT_ID=$(sed -n 's/^client_id: //p' "$WORK/app.out")
CLIENT_SECRET=$(sed -n 's/^client_secret: //p' "$WORK/app.out")

# mpin_dev ARGS...: the user's device (its own store).
mpin_dev() { local sub=$1; shift; "$BIN/mpin" "$sub" --store "$WORK/device" "$@"; }
echo 1234 | mpin_dev register --backend "$BACKEND" --verdict-key "$VERDICT_KEY" --identity alice@example.org --pin-stdin >/dev/null || exit 1

# rp.py: the relying party's side with the standard library only: start (a login page and its
# PKCE verifier), poll, token, userinfo. Prints what the shell reads.
cat > "$WORK/rp.py" <<'PY'
import base64, hashlib, json, os, re, sys, urllib.parse, urllib.request
base, cmd = sys.argv[1], sys.argv[2]
state_file = sys.argv[3]
def post(url, body, headers):
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r: return r.status, r.read()
    except urllib.error.HTTPError as e: return e.code, e.read()
if cmd == "start":
    client_id, redirect = sys.argv[4], sys.argv[5]
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    q = urllib.parse.urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
                                "scope": "openid email", "state": "s-42", "nonce": "n-42",
                                "code_challenge": challenge, "code_challenge_method": "S256"})
    html = urllib.request.urlopen(base + "/authorize?" + q, timeout=10).read().decode()
    code = re.search(r'<strong id="code" class="code">(\d{3}) (\d{4})</strong>', html)
    link = re.search(r'<code id="qrurl">([^<]+)</code>', html)
    web = re.search(r'var webOTT = "([0-9a-f]{32})"', html)
    json.dump({"verifier": verifier, "webOTT": web.group(1)}, open(state_file, "w"))
    print(code.group(1) + code.group(2), link.group(1))
elif cmd == "poll":
    st = json.load(open(state_file))
    status, body = post(base + "/authorize/status", json.dumps({"webOTT": st["webOTT"]}).encode(),
                        {"Content-Type": "application/json"})
    print(status, body.decode())
elif cmd == "token":
    client_id, secret, redirect, url = sys.argv[4:8]
    st = json.load(open(state_file))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert params.get("state") == "s-42", params
    basic = base64.b64encode(("%s:%s" % (client_id, secret)).encode()).decode()
    status, body = post(base + "/oidc/token", urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": params["code"], "redirect_uri": redirect,
        "code_verifier": st["verifier"]}).encode(),
        {"Authorization": "Basic " + basic, "Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200, (status, body)
    tokens = json.loads(body)
    open(state_file + ".id", "w").write(tokens["id_token"])
    req = urllib.request.Request(base + "/oidc/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]})
    print(json.load(urllib.request.urlopen(req, timeout=10))["email"])
PY
rp() { "$PY" "$WORK/rp.py" "$BACKEND" "$@"; }

# 1. The short code: what asks, a wrong PIN (counted), the right one.
read -r CODE LINK <<<"$(rp start "$WORK/s1" "$CLIENT_ID" "$REDIRECT")"
check "the page shows a 7-digit code and the M-Pin app link" \
  test "${#CODE}" = 7 -a "${LINK%%#*}" = "$BACKEND"
WRONG=$(echo 9999 | mpin_dev approve "${CODE:0:3}-${CODE:3}" --pin-stdin 2>&1)
check_all "mpin approve shows the application and the browser's address, and refuses a wrong PIN" \
  'grep -q "Login waiting for approval: web login to Team Wiki from browser 127.0.0.1" <<<"$WRONG" && grep -q INCORRECT_PIN <<<"$WRONG"'
check_all "the wrong PIN is counted" \
  '"$BIN/mpin-server" user list --json --data "$WORK/server" | grep -q "\"failedAttempts\" *: *1"'
check_all "the page still waits" 'rp poll "$WORK/s1" | grep -q pending'
RIGHT=$(echo 1234 | mpin_dev approve "$CODE" --pin-stdin 2>&1)
check "mpin approve approves the web login with the right PIN" grep -q "^APPROVED $CODE" <<<"$RIGHT"
POLL=$(rp poll "$WORK/s1")
URL=$(sed -n 's/.*"redirectURL" *: *"\([^"]*\)".*/\1/p' <<<"$POLL" | sed 's#\\/#/#g')
check "the page is given the redirect to the client with the code and the state" \
  grep -q "^$REDIRECT?code=.*&state=s-42$" <<<"$URL"
EMAIL=$(rp token "$WORK/s1" "$CLIENT_ID" "$CLIENT_SECRET" "$REDIRECT" "$URL")
check "the code redeems, and userinfo names the user" test "$EMAIL" = alice@example.org
check "the ID token verifies (RS256, jwcrypto, from discovery)" \
  "$PY" "$ROOT/Tests/OIDC/verify_id_token.py" "$BACKEND" "$CLIENT_ID" n-42 RS256 < "$WORK/s1.id"
AGAIN=$(echo 1234 | mpin_dev approve "$CODE" --pin-stdin 2>&1)
check "a used code approves nothing more" test -n "$(grep -v '^APPROVED' <<<"$AGAIN")" -a -z "$(grep '^APPROVED' <<<"$AGAIN")"

# 2. The M-Pin app link.
read -r CODE2 LINK2 <<<"$(rp start "$WORK/s2" "$CLIENT_ID" "$REDIRECT")"
OUT=$(echo 1234 | mpin_dev approve "$LINK2" --pin-stdin 2>&1)
check_all "mpin approve takes the page's M-Pin app link, showing what asks" \
  'grep -q "web login to Team Wiki from browser 127.0.0.1" <<<"$OUT" && grep -q "^APPROVED Team Wiki" <<<"$OUT"'
check_all "the page is given its redirect" 'rp poll "$WORK/s2" | grep -q authenticated'
OTHER="http://127.0.0.2:$PORT#${LINK2##*#}"
OUT=$(echo 1234 | mpin_dev approve "$OTHER" --pin-stdin 2>&1)
check "a link naming another backend is refused before any request" grep -q "FLOW_ERROR: the link is for http://127.0.0.2" <<<"$OUT"

# 3. Refused.
read -r CODE3 LINK3 <<<"$(rp start "$WORK/s3" "$CLIENT_ID" "$REDIRECT")"
check "mpin refuse ends the login" mpin_dev refuse "$CODE3"
check_all "the page is told it was refused" 'rp poll "$WORK/s3" | grep -q refused'
OUT=$(echo 1234 | mpin_dev approve "$CODE3" --pin-stdin 2>&1)
check "a refused login cannot be approved afterwards" test -z "$(grep '^APPROVED' <<<"$OUT")"
check_all "mpin refuse of a code no web login has fails" '! mpin_dev refuse 4241703 >/dev/null 2>&1'

# 4. A real browser, when Debian's chromium is installed (make test-weblogin installs it).
if [ -x /usr/bin/chromium ] && "$PY" -c "import authlib, websocket" 2>/dev/null; then
  ARTIFACTS="${WEBLOGIN_ARTIFACTS:-$ROOT/.build/weblogin-artifacts}"
  mkdir -p "$ARTIFACTS"
  "$PY" "$ROOT/Tests/OIDC/browser-login.py" --backend "$BACKEND" --client-id="$CLIENT_ID" --client-secret="$CLIENT_SECRET" \
    --rp-port "$RPPORT" --mpin "$BIN/mpin" --store "$WORK/device" --pin 1234 --artifacts "$ARTIFACTS" --work "$WORK" \
    --server-data "$WORK/server" > "$WORK/browser.out" 2>&1
  status=$?
  sed 's/^/  browser: /' "$WORK/browser.out"
  check "headless Chromium: a web login through the page and mpin approve, a refused and an expired login" test "$status" = 0
elif [ "${WEBLOGIN_REQUIRE_BROWSER:-0}" = 1 ]; then
  fail "the browser test needs /usr/bin/chromium, python3-authlib and python3-websocket (make deps installs them)"
else
  echo "skipped: the browser test needs /usr/bin/chromium, python3-authlib and python3-websocket (make deps installs them)"
fi

stop_server
summary
