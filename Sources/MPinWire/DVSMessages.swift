// Wire messages of designated verifier signatures on the MFA platform (docs/MFA.md §14).
// The registration request and answers carry the member names of MIRACL's public MFA clients
// (`publicKey`, `deviceName`, `dvsRegisterToken`; `dvsClientSecretShare`, `cs2url`, `curve`,
// `dtas`, `mpinId`; `dvsClientSecret`), learned from their DVS registration code.

/// `POST {dvsRegURL}`: enrol a signing key. `publicKey` is the hex of Pa (128 bytes), the
/// token a single-use DVS registration token (docs/MFA.md §14.1).
package struct DVSRegisterRequest: Codable, Sendable, Equatable {
    package var publicKey: String
    package var deviceName: String
    package var dvsRegisterToken: String

    package init(publicKey: String, deviceName: String, dvsRegisterToken: String) {
        self.publicKey = publicKey; self.deviceName = deviceName; self.dvsRegisterToken = dvsRegisterToken
    }
}

/// `POST {dvsRegURL}` 200 answer: the first D-TA's share of s·A for the signing identity
/// `mpinId ‖ Pa`, and the URL of the second share. `mpinId` is the signing mpinId the server
/// issued (hex); `curve` is always "BN254CX".
package struct DVSRegisterResponse: Codable, Sendable, Equatable {
    package var dvsClientSecretShare: String
    package var cs2url: String
    package var curve: String
    package var dtas: String
    package var mpinId: String

    package init(dvsClientSecretShare: String, cs2url: String, curve: String = "BN254CX", dtas: String = "", mpinId: String) {
        self.dvsClientSecretShare = dvsClientSecretShare; self.cs2url = cs2url; self.curve = curve
        self.dtas = dtas; self.mpinId = mpinId
    }
}

/// `GET {cs2url}` 200 answer from the second D-TA under MIRACL's DVS member name. mpin-server's
/// D-TA answers its ordinary `ClientSecretResponse` (`clientSecret`); the client reads either.
package struct DVSClientSecretResponse: Codable, Sendable, Equatable {
    package var dvsClientSecret: String

    package init(dvsClientSecret: String) { self.dvsClientSecret = dvsClientSecret }
}

/// `POST /{p}/dvsRegToken` 200 answer (the final step of an authentication, as `regCode`):
/// a DVS registration token for the authenticated user, its times in milliseconds.
package struct DVSRegisterTokenResponse: Codable, Sendable, Equatable {
    package var dvsRegisterToken: String
    package var expireTime: Int64
    package var ttlSeconds: Int
    package var nowTime: Int64

    package init(dvsRegisterToken: String, expireTime: Int64, ttlSeconds: Int, nowTime: Int64) {
        self.dvsRegisterToken = dvsRegisterToken; self.expireTime = expireTime
        self.ttlSeconds = ttlSeconds; self.nowTime = nowTime
    }
}

/// A signature as it travels (the SDK API reference's `BridgeSignature`, plus the time): every member hex
/// except `timestamp`, Unix seconds (the T of docs/DVS.md). `hash` is the signed message: the
/// document's SHA-256. Public: the SDK's `MPinSignature.message` and `verifySignature` carry it.
public struct DVSSignatureMessage: Codable, Sendable, Equatable {
    /// The signed message, the document's SHA-256, in hex.
    public var hash: String
    /// The signing identity's mpinId, in hex.
    public var mpinId: String
    /// The signature's U (a G1 point), in hex.
    public var u: String
    /// The signature's V (a G1 point), in hex.
    public var v: String
    /// The signer's public key Pa (a G2 point), in hex.
    public var publicKey: String
    /// When it was signed, in Unix seconds.
    public var timestamp: Int64

    /// A signature from its members, each as described above.
    public init(hash: String, mpinId: String, u: String, v: String, publicKey: String, timestamp: Int64) {
        self.hash = hash; self.mpinId = mpinId; self.u = u; self.v = v; self.publicKey = publicKey; self.timestamp = timestamp
    }
}

/// `POST /{p}/dvsVerify` 200 answer: whether the signature is valid for its document hash,
/// and whose it is (the user id the signing key was enrolled for; empty when invalid).
package struct DVSVerifyResponse: Codable, Sendable, Equatable {
    package var valid: Bool
    package var userId: String

    package init(valid: Bool, userId: String) { self.valid = valid; self.userId = userId }
}
