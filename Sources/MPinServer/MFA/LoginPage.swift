import Foundation
import Hummingbird
import MPinCrypto
import MPinWire

/// The page a person sees at `GET /authorize` (docs/MFA.md §5.2): which application asks, a QR
/// code and the short code to type into `mpin approve`, the time left, and the login's state
/// as the page's script polls it (waiting, approved, refused, expired, with a way to start
/// again). Everything is inline: no external asset, and a Content-Security-Policy that lets
/// only this response's own script and style run (a fresh nonce each time).
struct LoginPage {
    var appName: String
    var answer: AuthorizeResponse
    /// The 7-digit access number standing for the session, nil when none could be issued.
    var shortCode: String?
    /// Where "Start again" goes: the same authorization request, as a GET (same origin).
    var restartURL: String

    func response() -> Response {
        let nonce = (try? Secrets.randomBase64URL(18)) ?? Base64URL.encode(MPinCrypto.SHA256.hash(Array((answer.webOTT ?? "").utf8)))
        let html = render(nonce: nonce)
        let csp = "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
        return Response(status: .ok, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .contentSecurityPolicy: csp,
            .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer",
        ], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The short code as people read it: `123 4567`.
    static func spaced(_ code: String) -> String { String(code.prefix(3)) + " " + String(code.dropFirst(3)) }

    func render(nonce: String) -> String {
        let name = Self.htmlEscape(appName)
        let ttl = answer.ttlSeconds ?? 0
        var codeBlock: String
        if let shortCode, let qr = QRCode(digits: shortCode) {
            codeBlock = """
                <div class="qr">\(qr.svg(quiet: 4, title: "QR code of the login code \(shortCode)"))</div>
                <p>Login code: <strong id="code" class="code">\(Self.spaced(shortCode))</strong></p>
                <p>On your device, run <code>mpin approve \(shortCode)</code>, or scan the QR code, and enter your PIN.</p>
                """
        } else {
            codeBlock = "<p>No login code could be given now; an M-Pin app can use the link below.</p>"
        }
        codeBlock += """
            <p class="small">M-Pin app link: <code id="qrurl">\(Self.htmlEscape(answer.qrURL))</code></p>
            """
        let minutes = (ttl + 59) / 60
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Log in to \(name) with M-Pin</title>
            <style nonce="\(nonce)">
            body{font-family:system-ui,sans-serif;margin:0;padding:1rem;line-height:1.4;color:#111;background:#fff}
            main{max-width:30rem;margin:0 auto}
            h1{font-size:1.4rem;margin:.2rem 0 1rem}
            .qr svg{display:block;width:min(70vw,16rem);height:auto;margin:0 auto;border:1px solid #111}
            .code{font-family:ui-monospace,monospace;font-size:2rem;letter-spacing:.15em;white-space:nowrap}
            .small{font-size:.85rem;word-break:break-all}
            #status{border:2px solid #111;padding:.6rem;margin:1rem 0;font-weight:bold}
            #status[data-state=approved]{border-style:double;border-width:4px}
            #status[data-state=refused],#status[data-state=expired]{border-style:dashed}
            </style></head>
            <body><main>
            <h1>Log in to <span id="app">\(name)</span></h1>
            <div id="codes">
            \(codeBlock)
            </div>
            <p id="status" role="status" aria-live="polite" data-state="waiting">Waiting for approval.
            Time left: <span id="left">\(minutes) min</span>.</p>
            <p id="again" hidden><a id="again-link" href="\(Self.htmlEscape(restartURL))">Start again</a></p>
            <noscript><p>This page needs JavaScript to follow the login; reload it once you have approved.</p></noscript>
            </main>
            <script nonce="\(nonce)">
            (function () {
              "use strict";
              var webOTT = "\(answer.webOTT ?? "")";
              var end = Date.now() + \(ttl) * 1000;
              var status = document.getElementById("status");
              var finished = false;
              function show(state, text) {
                status.setAttribute("data-state", state);
                status.textContent = text;
                if (state !== "waiting") document.getElementById("codes").hidden = true;
                if (state === "refused" || state === "expired") {
                  finished = true;
                  document.getElementById("again").hidden = false;
                }
              }
              function left() {
                var s = Math.max(0, Math.round((end - Date.now()) / 1000));
                return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
              }
              function tick() {
                if (finished) return;
                if (Date.now() >= end) { show("expired", "Expired: this login was not approved in time."); return; }
                if (status.getAttribute("data-state") === "waiting") {
                  status.textContent = "Waiting for approval. Time left: " + left() + ".";
                }
                setTimeout(tick, 1000);
              }
              function poll() {
                if (finished) return;
                fetch("/authorize/status", {method: "POST", headers: {"Content-Type": "application/json"},
                                            body: JSON.stringify({webOTT: webOTT}), cache: "no-store"})
                  .then(function (r) {
                    if (r.status === 404) { show("expired", "Expired: this login is no longer valid."); return null; }
                    return r.ok ? r.json() : null;
                  })
                  .then(function (s) {
                    if (finished) return;
                    if (s && s.status === "authenticated" && s.redirectURL) {
                      finished = true;
                      show("approved", "Approved. Returning to \(Self.jsEscape(appName))…");
                      window.location.replace(s.redirectURL);
                      return;
                    }
                    if (s && s.status === "refused") { show("refused", "Refused on the device."); return; }
                    if (s && s.status === "done") { show("approved", "Approved."); finished = true; return; }
                    setTimeout(poll, 1000);
                  })
                  .catch(function () { setTimeout(poll, 2000); });
              }
              tick();
              poll();
            })();
            </script>
            </body></html>
            """
    }

    static func htmlEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    /// Text for a JavaScript string literal in an inline script: every character outside plain
    /// letters, digits, space and a few marks as `\uXXXX`, so that no quote, backslash, `<` or
    /// line break can end the literal or the script.
    static func jsEscape(_ s: String) -> String {
        var out = ""
        for unit in s.utf16 {
            switch unit {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x20, 0x2E, 0x2C, 0x2D, 0x5F: out.unicodeScalars.append(Unicode.Scalar(unit)!)
            default: out += String(format: "\\u%04x", unit)
            }
        }
        return out
    }
}
