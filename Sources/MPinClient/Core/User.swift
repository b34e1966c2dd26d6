import MPinCrypto
import MPinWire

/// A user of the client core (the SDK's `UserPtr`): an identity on one backend.
///
/// Instances are reference types so that the core can tell the user in its list from a
/// look-alike (a call with another object is a FLOW_ERROR, as in the SDK). Secret material
/// (regOTT, client-secret shares, time-permit shares) lives only in memory here and is wiped
/// when no longer needed; the token itself is read from secure storage when needed.
///
/// Not `Sendable`: the core changes a user's state during its calls, unlocked, so a user is
/// used on the thread of the `MPinSDK` (or `MPinMFA`) that made it.
public final class MPinUser: CustomStringConvertible {
    /// The user id (e-mail address or similar) as registered.
    public let id: String
    public internal(set) var deviceName: String
    public internal(set) var state: MPinUserState = .invalid
    /// Lower-case hex of the mpinId the server issued; empty before registration.
    public internal(set) var mpinIdHex = ""
    /// The backend key (§3.9) the user belongs to; empty until registration starts.
    public internal(set) var backendKey = ""
    /// MFA flavour (MFA.md §1): the customer the user registered with (the backend's `appID`);
    /// empty for a user of the Milagro flavour.
    public internal(set) var customerId = ""
    /// MFA flavour: the application id the user is scoped to (the SDK API reference's "for future use",
    /// empty today).
    public internal(set) var appId = ""

    /// The SDK API reference's `getBackend`: the backend the user belongs to, as the core keys it (the
    /// URL without scheme and trailing `/`).
    public var backend: String { backendKey }

    var regOTT = ""
    var clientSecretShare1 = SecretBytes()
    var clientSecretShare2 = SecretBytes()
    var timePermitShare1: [UInt8] = []
    var timePermitShare2: [UInt8] = []
    var timePermitDate: Int32 = 0
    /// Whether the second share came from the device cache, and a fetched one to cache once a
    /// login with it succeeds (name, date, share).
    var permitFromDevice = false
    var permitToCache: (String, Int64, [UInt8])?
    var logoutURL = ""
    var logoutData = ""
    /// MFA flavour: the push message identifier given to StartRegistration, sent with
    /// ConfirmRegistration. Memory only.
    var pushMessageIdentifier = ""

    /// The backend's verdict-signing public key (hex), pinned when the registration started
    /// (PROTOCOL.md §4.5.1): once set, FinishAuthentication believes an OK, or a blocked
    /// answer, only with this key's signature over its own nonce. Empty for a backend that
    /// does not sign (a Milagro RPS). Kept in the user list (not secret).
    public internal(set) var verdictKeyHex = ""

    /// After FinishAuthentication answered INCORRECT_PIN: the wrong PINs the identity may still
    /// take before the backend blocks it, when the backend said so with the pinned key's
    /// signature over this login's nonce; nil otherwise (unsigned, or a backend that does not
    /// count aloud). Memory only: each final step sets or clears it.
    public internal(set) var attemptsLeft: Int?

    /// DVS (docs/MFA.md §14): the signing mpinId and public key Pa (hex) once a signing key is
    /// enrolled and its token stored; empty otherwise. Kept in the user list (not secret).
    public internal(set) var signingMpinIdHex = ""
    public internal(set) var signingPublicKeyHex = ""
    /// The SDK API reference's `canSign`: whether the user holds a signing key and its token.
    public var canSign: Bool { !signingMpinIdHex.isEmpty && !signingPublicKeyHex.isEmpty }
    /// Between StartRegistrationDVS and FinishRegistrationDVS: the new key's secret z, the
    /// client-secret shares for the signing identity, and its mpinId and Pa. Memory only.
    var pendingSigningKey = SecretBytes()
    var pendingSigningShare1 = SecretBytes()
    var pendingSigningShare2 = SecretBytes()
    var pendingSigningMpinIdHex = ""
    var pendingSigningPublicKeyHex = ""

    init(id: String, deviceName: String) {
        self.id = id
        self.deviceName = deviceName
    }

    /// The raw mpinId bytes, or nil when not registered.
    var mpinId: [UInt8]? { mpinIdHex.isEmpty ? nil : Hex.decode(mpinIdHex) }

    /// `userId@backendKey`, the key the SDK uses for a user.
    public var key: String { "\(id)@\(backendKey)" }

    public var description: String { "\(id) [\(state.rawValue)]" }

    /// Replacing a share wipes the old one (SecretBytes).
    func wipeShares() {
        clientSecretShare1 = SecretBytes()
        clientSecretShare2 = SecretBytes()
        wipePendingSigningKey()
    }

    func wipePendingSigningKey() {
        pendingSigningKey = SecretBytes()
        pendingSigningShare1 = SecretBytes()
        pendingSigningShare2 = SecretBytes()
        pendingSigningMpinIdHex = ""
        pendingSigningPublicKeyHex = ""
    }

    func wipePermits() {
        timePermitShare1.wipe()
        timePermitShare2.wipe()
        timePermitShare1 = []
        timePermitShare2 = []
        timePermitDate = 0
        permitFromDevice = false
        permitToCache = nil
    }
}
