internal import MPinCrypto
internal import MPinJSON
internal import MPinWire

/// Logins approved from a device (PROTOCOL.md §5.7, **[here]**). The requester (the PAM
/// module, in the browser's role) asks for an access number with a description of itself,
/// polls until a device approved it, then completes the login with the relying party's step,
/// which names the identity that approved. The device reads the description back before it
/// asks for the PIN, then runs FinishAuthenticationAN.
extension MPinSDK {
    /// An access number issued to this requester.
    package struct IssuedAccessNumber: Sendable, Equatable {
        package var accessNumber: String
        /// Proves, when polling, that this requester asked for the number; a secret.
        package var webOTT: String
        package var ttlSeconds: Int
        /// The description sent with the request, as sent.
        package var description: String = ""
        /// The nonce the approval's verdict must be signed over (empty: none asked for).
        package var verdictNonce: [UInt8] = []
    }

    /// The identity that approved an access number.
    package struct Approval: Sendable, Equatable {
        package var userId: String
        package var mpinIdHex: String
        /// The server's certificate of the host key sent with the final step (PROTOCOL.md
        /// §5.8); empty when none was sent or the server gave none.
        package var hostCertificate: String = ""
    }

    /// A requester's host key and the certificate the backend gave it (PROTOCOL.md §5.8); the
    /// secret key is the caller's, never logged.
    package struct HostKey: Sendable {
        package var secretKey: [UInt8]
        package var publicKey: [UInt8]
        /// The backend's certificate of `publicKey`, or empty.
        package var certificate: String
        /// The local user the login is for: the backend counts per host key and user.
        package var user: String
        package init(secretKey: [UInt8], publicKey: [UInt8], certificate: String, user: String) {
            self.secretKey = secretKey; self.publicKey = publicKey; self.certificate = certificate; self.user = user
        }
    }

    /// `POST getAccessNumberURL {"description": …}`. With `signed`, a fresh nonce goes with it,
    /// which the server binds to the number (PROTOCOL.md §4.5.1) and the approval's verdict
    /// must then be signed over.
    /// With `host`, the request is signed with the host's key and carries its certificate, so
    /// that the backend counts it against this host's limits (§5.8), not the anonymous ones.
    package func requestAccessNumber(description: String, signed: Bool = false,
                                    host: HostKey? = nil) -> (status: MPinStatus, issued: IssuedAccessNumber?) {
        guard let settings else { return (MPinStatus(.flowError, "no backend is set"), nil) }
        let url = settings.wire.getAccessNumberURL ?? ""
        guard !url.isEmpty else { return (MPinStatus(.flowError, "the backend issues no access numbers"), nil) }
        var nonce: [UInt8] = []
        if signed {
            do { nonce = try SystemRandom.bytes(Verdict.nonceSize) } catch {
                return (MPinStatus(.cryptoError, "could not draw a nonce: \(error)"), nil)
            }
        }
        let sent = AccessNumberDescription.sanitized(description)
        var body = AccessNumberRequest(description: sent, verdictNonce: signed ? Hex.encode(nonce) : nil)
        if let host {
            // The wall clock, which the server compares with its own; a host whose clock is off
            // by more than a minute is counted as anonymous, nothing worse.
            let millis = WallClock.nowMillis()
            do { body = try HostCredential.signed(body, secretKey: host.secretKey, publicKey: host.publicKey,
                                                  certificate: host.certificate, user: host.user, timeMillis: millis) } catch {
                return (MPinStatus(.cryptoError, "could not sign the request with the host key"), nil)
            }
        }
        switch request(.post, url, body: body) {
        case .failed(let s, _): return (s, nil)
        case .ok(let v, _):
            guard let r = WireCoding.lenient(AccessNumberResponse.self, from: v), !r.accessNumber.isEmpty, !r.webOTT.isEmpty else {
                return (MPinStatus(.responseParseError, "the access-number response is not usable"), nil)
            }
            return (.ok, IssuedAccessNumber(accessNumber: r.accessNumber, webOTT: r.webOTT, ttlSeconds: r.ttlSeconds,
                                            description: sent, verdictNonce: nonce))
        }
    }

    /// One poll: the authOTT once a device approved the number, nil while none has (HTTP 401).
    package func pollAccessNumber(_ issued: IssuedAccessNumber) -> (status: MPinStatus, authOTT: String?) {
        guard let settings else { return (MPinStatus(.flowError, "no backend is set"), nil) }
        let url = settings.wire.accessNumberURL ?? ""
        guard !url.isEmpty else { return (MPinStatus(.flowError, "the backend has no accessNumberURL"), nil) }
        switch request(.post, url, body: AccessNumberPollRequest(webOTT: issued.webOTT)) {
        case .failed(_, httpStatus: 401): return (.ok, nil)
        case .failed(let s, _): return (s, nil)
        case .ok(let v, _):
            guard let ott = WireCoding.lenient(AccessNumberPollResponse.self, from: v)?.authOTT, !ott.isEmpty else {
                return (MPinStatus(.responseParseError, "the poll response has no authOTT"), nil)
            }
            return (.ok, ott)
        }
    }

    /// The relying party's step for an approved access number (`POST {backend}/authenticate`):
    /// the verdict and the identity that approved. The waiting device is handed logout data
    /// naming `expectedUserId` with a random token (no relying-party session exists here).
    /// With `verdictKeyHex` (the key pinned when the account was linked), the verdict must be
    /// signed with it over the nonce `issued` was requested with, this access number and its
    /// description (PROTOCOL.md §4.5.1); anything else is CRYPTO_ERROR, whoever answered.
    package func completeAccessNumberLogin(_ issued: IssuedAccessNumber, authOTT: String, expectedUserId: String,
                                          verdictKeyHex: String = "", hostKey: [UInt8] = []) -> (status: MPinStatus, approval: Approval?) {
        guard settings != nil else { return (MPinStatus(.flowError, "no backend is set"), nil) }
        let token = Hex.encode((try? SystemRandom.bytes(16)) ?? [])
        // The webOTT proves this requester, for the verdict's signature and for the host key's
        // certificate (§5.8).
        let body = TokenAuthenticateRequest(authOTT: authOTT, logoutData: LogoutData(userId: expectedUserId, sessionToken: token),
                                            webOTT: verdictKeyHex.isEmpty && hostKey.isEmpty ? nil : issued.webOTT,
                                            hostKey: hostKey.isEmpty ? nil : Hex.encode(hostKey))
        switch request(.post, backend + "/authenticate", body: body, context: .authenticate) {
        case .failed(let s, _): return (s, nil)
        case .ok(let v, _):
            guard let r = WireCoding.lenient(TokenAuthenticateResponse.self, from: v), r.status == 200, !r.userId.isEmpty else {
                return (MPinStatus(.responseParseError, "the verdict names no identity"), nil)
            }
            if !verdictKeyHex.isEmpty {
                let context = Verdict.deviceContext(accessNumber: issued.accessNumber, description: issued.description)
                guard issued.verdictNonce.count == Verdict.nonceSize, let mpinID = Hex.decode(r.mpinId), !mpinID.isEmpty,
                      Verdict.verify(r.verdictSignature, publicKeyHex: verdictKeyHex, nonce: issued.verdictNonce, mpinID: mpinID,
                                     userID: r.userId, status: 200, context: context) else {
                    return (MPinStatus(.cryptoError, Self.unsignedVerdict), nil)
                }
            }
            return (.ok, Approval(userId: r.userId, mpinIdHex: r.mpinId, hostCertificate: r.hostCertificate ?? ""))
        }
    }

    /// The device's side: what the access number was issued for (`GET accessNumberURL/{number}`).
    /// INCORRECT_ACCESS_NUMBER when no live, unused number has it.
    package func accessNumberDescription(_ accessNumber: String) -> (status: MPinStatus, description: String) {
        guard let settings else { return (MPinStatus(.flowError, "no backend is set"), "") }
        let url = settings.wire.accessNumberURL ?? ""
        guard !url.isEmpty else { return (MPinStatus(.flowError, "the backend has no accessNumberURL"), "") }
        guard accessNumber.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), !accessNumber.isEmpty else {
            return (MPinStatus(.incorrectAccessNumber, "an access number is digits only"), "")
        }
        switch request(.get, url + "/" + accessNumber) {
        case .failed(_, httpStatus: 404), .failed(_, httpStatus: 400):
            return (MPinStatus(.incorrectAccessNumber, "no login is waiting for this access number (wrong, expired or used)"), "")
        case .failed(let s, _): return (s, "")
        case .ok(let v, _):
            let d = WireCoding.lenient(AccessNumberDetailsResponse.self, from: v)?.description ?? ""
            return (.ok, AccessNumberDescription.sanitized(d))
        }
    }
}
