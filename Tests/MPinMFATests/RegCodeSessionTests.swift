import Foundation
import MPinClient
import MPinCrypto
import MPinLinux
import MPinServer
import XCTest

/// Registration codes (docs/MFA.md §8) with the rest of the MFA flavour: a code asked for by
/// a user with a second factor (pin1), and a registration that carries both the session's
/// access code and the code. The server verifies identities by code, so only the
/// registration code can make the second device's registration active.
final class RegCodeSessionTests: XCTestCase {
    func testCodeFromATwoFactorUserAndAccessCodesAtRegistration() async throws {
        let server = try await MFAServer(autoActivate: false)
        let r = await blocking { () -> [String] in
            do {
                // The first device: registered with pin1, verified by the administrator.
                let laptop = server.sdk()
                let alice = laptop.makeNewUser(id: "alice@example.org", deviceName: "laptop")
                let first = laptop.getAccessCode(authzURL: server.authorizationURL(challenge: try MFAServer.pkce().challenge))
                var out = [first.status.code, laptop.startRegistration(alice, accessCode: first.accessCode, pmi: "").code]
                try server.activate("alice@example.org")
                out += [laptop.confirmRegistration(alice).code,
                        laptop.finishRegistration(alice, pin0: secret("1234"), pin1: secret("yubi-1")).code]
                // A right pin0 with a wrong pin1 gets no code.
                out.append(laptop.startAuthenticationRegCode(alice).code)
                let refused = laptop.finishAuthenticationRegCode(alice, pin0: secret("1234"), pin1: secret("yubi-2"))
                out += [refused.status.code, refused.regCode.status.code]
                out.append(laptop.startAuthenticationRegCode(alice).code)
                let (status, regCode) = laptop.finishAuthenticationRegCode(alice, pin0: secret("1234"), pin1: secret("yubi-1"))
                out += [status.code, regCode.status.code]

                // The second device: a dead access code refuses the registration (the code
                // stays unused), a live one with the code makes it active at once.
                let phone = MPinMFA(context: try server.anotherDevice())
                out.append(phone.initialize(config: ["backend": server.backend]).code)
                let user = phone.makeNewUser(id: "alice@example.org", deviceName: "phone")
                out.append(phone.startRegistration(user, accessCode: String(repeating: "ab", count: 16), regCode: regCode.otp,
                                                   pmi: "").code)
                let live = phone.getAccessCode(authzURL: server.authorizationURL(challenge: try MFAServer.pkce().challenge))
                out.append(phone.getSessionDetails(accessCode: live.accessCode).status.code)
                out.append(phone.startRegistration(user, accessCode: live.accessCode, regCode: regCode.otp, pmi: "push-1").code)
                let state = user.state
                out += [phone.confirmRegistration(user).code,
                        phone.finishRegistration(user, pin0: secret("5678"), pin1: SecretBytes()).code,
                        phone.startAuthentication(user, accessCode: live.accessCode).code,
                        phone.finishAuthentication(user, pin0: secret("5678"), pin1: SecretBytes(), accessCode: live.accessCode).code]
                return out.map(\.rawValue) + [state.rawValue, user.customerId == server.customerId ? "customer" : user.customerId]
            } catch { return ["\(error)"] }
        }
        await server.stop()
        XCTAssertEqual(r, ["OK", "OK", "OK", "OK",
                           "OK", "INCORRECT_PIN", "FLOW_ERROR", "OK", "OK", "OK",
                           "OK", "INCORRECT_ACCESS_NUMBER", "OK", "OK", "OK", "OK", "OK", "OK",
                           "ACTIVATED", "customer"])
    }
}
