// Wire messages of designated verifier signatures on the MFA platform (docs/MFA.md §14).
// The registration request and answers carry the member names of MIRACL's public MFA clients
// (`publicKey`, `deviceName`, `dvsRegisterToken`; `dvsClientSecretShare`, `cs2url`, `curve`,
// `dtas`, `mpinId`; `dvsClientSecret`), learned from their DVS registration code.

/// `POST {dvsRegURL}`: enrol a signing key. `publicKey` is the hex of Pa (128 bytes), the
/// token a single-use DVS registration token (docs/MFA.md §14.1).
public struct DVSRegisterRequest: Codable, Sendable, Equatable {
    public var publicKey: String
    public var deviceName: String
    public var dvsRegisterToken: String

    public init(publicKey: String, deviceName: String, dvsRegisterToken: String) {
        self.publicKey = publicKey; self.deviceName = deviceName; self.dvsRegisterToken = dvsRegisterToken
    }
}

/// `POST {dvsRegURL}` 200 answer: the first D-TA's share of s·A for the signing identity
/// `mpinId ‖ Pa`, and the URL of the second share. `mpinId` is the signing mpinId the server
/// issued (hex); `curve` is always "BN254CX".
public struct DVSRegisterResponse: Codable, Sendable, Equatable {
    public var dvsClientSecretShare: String
    public var cs2url: String
    public var curve: String
    public var dtas: String
    public var mpinId: String

    public init(dvsClientSecretShare: String, cs2url: String, curve: String = "BN254CX", dtas: String = "", mpinId: String) {
        self.dvsClientSecretShare = dvsClientSecretShare; self.cs2url = cs2url; self.curve = curve
        self.dtas = dtas; self.mpinId = mpinId
    }
}

/// `GET {cs2url}` 200 answer from the second D-TA under MIRACL's DVS member name. mpin-server's
/// D-TA answers its ordinary `ClientSecretResponse` (`clientSecret`); the client reads either.
public struct DVSClientSecretResponse: Codable, Sendable, Equatable {
    public var dvsClientSecret: String

    public init(dvsClientSecret: String) { self.dvsClientSecret = dvsClientSecret }
}

/// `POST /{p}/dvsRegToken` 200 answer (the final step of an authentication, as `regCode`):
/// a DVS registration token for the authenticated user, its times in milliseconds.
public struct DVSRegisterTokenResponse: Codable, Sendable, Equatable {
    public var dvsRegisterToken: String
    public var expireTime: Int64
    public var ttlSeconds: Int
    public var nowTime: Int64

    public init(dvsRegisterToken: String, expireTime: Int64, ttlSeconds: Int, nowTime: Int64) {
        self.dvsRegisterToken = dvsRegisterToken; self.expireTime = expireTime
        self.ttlSeconds = ttlSeconds; self.nowTime = nowTime
    }
}

/// A signature as it travels (the SDK API reference's `BridgeSignature`, plus the time): every member hex
/// except `timestamp`, Unix seconds (the T of docs/DVS.md). `hash` is the signed message: the
/// document's SHA-256.
public struct DVSSignatureMessage: Codable, Sendable, Equatable {
    public var hash: String
    public var mpinId: String
    public var u: String
    public var v: String
    public var publicKey: String
    public var timestamp: Int64

    public init(hash: String, mpinId: String, u: String, v: String, publicKey: String, timestamp: Int64) {
        self.hash = hash; self.mpinId = mpinId; self.u = u; self.v = v; self.publicKey = publicKey; self.timestamp = timestamp
    }
}

/// `POST /{p}/dvsVerify` 200 answer: whether the signature is valid for its document hash,
/// and whose it is (the user id the signing key was enrolled for; empty when invalid).
public struct DVSVerifyResponse: Codable, Sendable, Equatable {
    public var valid: Bool
    public var userId: String

    public init(valid: Bool, userId: String) { self.valid = valid; self.userId = userId }
}
