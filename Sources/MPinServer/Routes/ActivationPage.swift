import Hummingbird
import MPinCrypto
import MPinWire

/// What `GET /mpinActivate` shows in `link` mode: the registration the link would activate (who,
/// its fingerprint) and a button that activates it with a POST. A GET never activates: mail
/// scanners, link previews and prefetching browsers open links in mail before the person does,
/// and an activation they trigger would hand a registration started by anyone
/// (docs/SECURITY.md §6.2) a working identity without the mailbox owner ever looking at it.
struct ActivationPage {
    /// The link's query as it came (`i`, `e`, `s`), posted back unchanged by the button.
    var query: String
    /// Whose registration, read from the mpinId in the link; nil when the link names none.
    var userID: String?
    /// SHA-256 of the mpinId in hex, as the registering screen and the mail show it.
    var fingerprint: String?

    init(query: String, mpinIDHex: String?) {
        self.query = query
        let mpinID = mpinIDHex.flatMap { Hex.decode($0) }
        userID = mpinID.flatMap { MPinIdentity.parse($0)?.userID }
        fingerprint = mpinIDHex.flatMap { MPinIdentity.fingerprint(mpinIdHex: $0) }
    }

    func response() -> Response {
        Self.html(render(), formTarget: true)
    }

    func render() -> String {
        let who = userID.map(LoginPage.htmlEscape) ?? "an unknown identity"
        let print = fingerprint.map { LoginPage.htmlEscape(String($0.prefix(16))) } ?? "(none)"
        // The query goes back as the form's target, relative to this page, so a proxy's path
        // prefix stays; escaped for an attribute.
        let target = LoginPage.htmlEscape("?" + query)
        return Self.document(title: "Activate an M-Pin registration", body: """
            <h1>Activate an M-Pin registration?</h1>
            <p>A device asked to register an M-Pin identity for <strong>\(who)</strong>.</p>
            <p>Its registration fingerprint begins <code>\(print)</code>. Activate it only if you
            started this registration yourself and your device shows the same fingerprint.</p>
            <form method="post" action="\(target)"><button type="submit">Activate</button></form>
            <p>If you did not start it, close this page: nothing happens and the link expires.</p>
            """)
    }

    /// The page after the button: activated.
    static func activated() -> Response {
        html(document(title: "M-Pin registration activated", body: """
            <h1>Registration activated</h1>
            <p>Go back to your device and choose a PIN.</p>
            """), formTarget: false)
    }

    private static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title></head>
        <body><main>
        \(body)
        </main></body></html>
        """
    }

    /// An inline page with no script, style or image at all; the form may post only to this
    /// server, and no other site may frame it (a framed button is a click the person did not mean).
    private static func html(_ text: String, formTarget: Bool) -> Response {
        let csp = "default-src 'none'; form-action " + (formTarget ? "'self'" : "'none'")
            + "; frame-ancestors 'none'; base-uri 'none'"
        return Response(status: .ok, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .contentSecurityPolicy: csp,
            .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer",
        ], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
