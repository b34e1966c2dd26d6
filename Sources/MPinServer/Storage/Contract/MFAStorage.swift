package import Foundation
import MPinWire

/// The MFA platform's state (docs/MFA.md §11): applications, sessions started by `/authorize`
/// with their access codes, and authorization codes. Same contract as `ServerStorage`: each
/// method is one transaction, codes arrive and are kept as hashes.
package protocol MFAStorage: Sendable {
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
    /// The new code carries the wrong-code count of the user's other live codes: issuing one
    /// does not start the count again (`WrongRegCodeCounter`).
    func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool
}

/// A registered application as the server reads it.
package struct StoredApp: Sendable, Equatable {
    package var clientID: String
    package var name: String
    package var logoURL: String
    package var redirectURI: String
    package var secretHash: String
    /// `RS256` or `ES256` (docs/MFA.md §7.1).
    package var idTokenAlg: String
}

/// A session `/authorize` creates.
package struct NewMFASession: Sendable {
    package var accessCodeHash: String
    package var webOTTHash: String
    package var clientID: String
    package var redirectURI: String
    package var state: String
    package var nonce: String?
    package var codeChallenge: String
    package var prerollID: String
    package var expires: Date

    package init(accessCodeHash: String, webOTTHash: String, clientID: String, redirectURI: String, state: String,
                nonce: String?, codeChallenge: String, prerollID: String, expires: Date) {
        self.accessCodeHash = accessCodeHash; self.webOTTHash = webOTTHash; self.clientID = clientID
        self.redirectURI = redirectURI; self.state = state; self.nonce = nonce; self.codeChallenge = codeChallenge
        self.prerollID = prerollID; self.expires = expires
    }
}

/// The verbs of `codeStatus`.
package enum CodeStatusVerb: Sendable, Equatable {
    case wid
    case user(String)
    case abort
}

/// What `codeStatus` shows of a session: its app and the identity hint.
package struct SessionView: Sendable, Equatable {
    package var prerollID: String
    package var appName: String
    package var appLogoURL: String
}

/// The browser's view of its session.
package enum SessionPoll: Sendable, Equatable {
    case pending
    /// The redirect carrying the authorization code, handed out once.
    case authenticated(redirectURL: String)
    case done
    /// The device refused the login (`codeStatus` `abort`).
    case refused
}

/// An authorization code to issue in the verdict's transaction.
package struct NewAuthorizationCode: Sendable, Equatable {
    package var code: String
    package var codeHash: String
    package var expires: Date

    package init(code: String, codeHash: String, expires: Date) {
        self.code = code; self.codeHash = codeHash; self.expires = expires
    }
}

/// The result of an access-code login: the code and where the browser goes with it.
package struct IssuedAuthorization: Sendable, Equatable {
    package var code: String
    package var redirectURL: String
}

/// What an authorization code grants at the token endpoint.
package struct AuthorizationGrant: Sendable, Equatable {
    package var redirectURI: String
    package var codeChallenge: String
    package var nonce: String?
    package var userID: String
    package var authTime: Date
}

/// The outcome of redeeming a code.
package enum Redemption: Sendable, Equatable {
    /// Unknown, expired, used, or issued to another client.
    case invalid
    case granted(AuthorizationGrant)
}
