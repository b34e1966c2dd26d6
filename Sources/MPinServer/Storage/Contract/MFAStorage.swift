import Foundation
import MPinWire

/// The MFA platform's state (docs/MFA.md §11): applications, sessions started by `/authorize`
/// with their access codes, and authorization codes. Same contract as `ServerStorage`: each
/// method is one transaction, codes arrive and are kept as hashes.
protocol MFAStorage: Sendable {
    /// The application with this client id, nil when there is none.
    func app(clientID: String) async throws -> StoredApp?
    /// Stores a new session; false if its access code or webOTT hash is already in use.
    func createSession(_ session: NewMFASession) async throws -> Bool
    /// Applies a `codeStatus` verb to a live session (docs/MFA.md §4); nil when there is none.
    func codeStatus(accessCodeHash: String, verb: CodeStatusVerb, now: Date) async throws -> SessionView?
    /// The browser's poll (docs/MFA.md §5.3); nil for no live session.
    func pollSession(webOTTHash: String, now: Date) async throws -> SessionPoll?
    /// Consumes an authorization code for `clientID` (docs/MFA.md §7).
    func redeem(codeHash: String, clientID: String, now: Date) async throws -> Redemption
    /// Keeps a registration code of `userID` (docs/MFA.md §8); false if its hash is already in use.
    func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool
    /// Deletes every registration code of `userID` (too many wrong codes were tried for it);
    /// how many there were.
    func dropRegCodes(userID: String) async throws -> Int
}

/// A registered application as the server reads it.
struct StoredApp: Sendable, Equatable {
    var clientID: String
    var name: String
    var logoURL: String
    var redirectURI: String
    var secretHash: String
    /// `RS256` or `ES256` (docs/MFA.md §7.1).
    var idTokenAlg: String
}

/// A session `/authorize` creates.
struct NewMFASession: Sendable {
    var accessCodeHash: String
    var webOTTHash: String
    var clientID: String
    var redirectURI: String
    var state: String
    var nonce: String?
    var codeChallenge: String
    var prerollID: String
    var expires: Date
}

/// The verbs of `codeStatus`.
enum CodeStatusVerb: Sendable, Equatable {
    case wid
    case user(String)
    case abort
}

/// What `codeStatus` shows of a session: its app and the identity hint.
struct SessionView: Sendable, Equatable {
    var prerollID: String
    var appName: String
    var appLogoURL: String
}

/// The browser's view of its session.
enum SessionPoll: Sendable, Equatable {
    case pending
    /// The redirect carrying the authorization code, handed out once.
    case authenticated(redirectURL: String)
    case done
    /// The device refused the login (`codeStatus` `abort`).
    case refused
}

/// An authorization code to issue in the verdict's transaction.
struct NewAuthorizationCode: Sendable, Equatable {
    var code: String
    var codeHash: String
    var expires: Date
}

/// The result of an access-code login: the code and where the browser goes with it.
struct IssuedAuthorization: Sendable, Equatable {
    var code: String
    var redirectURL: String
}

/// What an authorization code grants at the token endpoint.
struct AuthorizationGrant: Sendable, Equatable {
    var redirectURI: String
    var codeChallenge: String
    var nonce: String?
    var userID: String
    var authTime: Date
}

/// The outcome of redeeming a code.
enum Redemption: Sendable, Equatable {
    /// Unknown, expired, used, or issued to another client.
    case invalid
    case granted(AuthorizationGrant)
}
