import Foundation
import MPinClient
import MPinCrypto
import MPinServer
import XCTest

/// Registration codes (docs/MFA.md §8) between two devices of one user, against mpin-server:
/// a code from an authenticated device registers the identity on another device without
/// identity verification, once, for that user only, within its lifetime.
final class RegistrationCodeTests: XCTestCase {
    /// Identity verification by code (so a registration without a registration code stays
    /// unverified) and codes that live two seconds.
    private func codeServer() async throws -> MFAServer {
        try await MFAServer(autoActivate: false) { config in
            var mfa = MFASettings()
            mfa.regCodeTTLSeconds = 2
            config.mfaSettings = mfa
        }
    }

    /// A user registered on the server's first device (activated by the administrator) and a
    /// registration code from FinishAuthenticationRegCode.
    private static func firstDevice(_ server: MFAServer, _ id: String) throws -> (MPinMFA, MPinUser, MPinRegCode, [MPinStatus.Code]) {
        let mfa = server.sdk()
        let user = mfa.makeNewUser(id: id, deviceName: "laptop")
        var out = [mfa.startRegistration(user, accessCode: "", pmi: "").code]
        try server.activate(id)
        out.append(mfa.confirmRegistration(user).code)
        out.append(mfa.finishRegistration(user, pin0: secret("1234"), pin1: SecretBytes()).code)
        out.append(mfa.startAuthenticationRegCode(user).code)
        let (status, code) = mfa.finishAuthenticationRegCode(user, pin0: secret("1234"), pin1: SecretBytes())
        out.append(status.code)
        return (mfa, user, code, out)
    }

    /// Another device's MPinMFA on the same backend.
    private static func secondDevice(_ server: MFAServer) throws -> MPinMFA {
        let mfa = MPinMFA(context: try server.anotherDevice())
        XCTAssertEqual(mfa.initialize(config: ["backend": server.backend]).code, .ok)
        return mfa
    }

    func testACodeRegistersAnotherDeviceOnce() async throws {
        let server = try await codeServer()
        let r = await blocking { () -> ([MPinStatus.Code], MPinRegCode, MPinUserState, MPinStatus.Code) in
            var (_, _, code, out) = try! Self.firstDevice(server, "two-devices@example.org")
            let phone = try! Self.secondDevice(server)
            let user = phone.makeNewUser(id: "two-devices@example.org", deviceName: "phone")
            out.append(phone.startRegistration(user, accessCode: "", regCode: code.otp, pmi: "").code)
            out.append(phone.confirmRegistration(user).code)          // active at once: no administrator
            out.append(phone.finishRegistration(user, pin0: secret("5678"), pin1: SecretBytes()).code)
            out.append(phone.startAuthenticationOTP(user).code)
            out.append(phone.finishAuthenticationOTP(user, pin0: secret("5678")).status.code)
            // The same code again, on a third device: used up.
            let tablet = try! Self.secondDevice(server)
            let again = tablet.makeNewUser(id: "two-devices@example.org", deviceName: "tablet")
            let reused = tablet.startRegistration(again, accessCode: "", regCode: code.otp, pmi: "").code
            return (out, code, user.state, reused)
        }
        await server.stop()
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok])
        XCTAssertEqual(r.1.otp.count, 12)
        XCTAssertTrue(r.1.otp.allSatisfy(\.isNumber))
        XCTAssertEqual(r.1.ttlSeconds, 2)
        XCTAssertEqual(r.1.expireTime - r.1.nowTime, 2)
        XCTAssertEqual(r.2, .registered)
        XCTAssertEqual(r.3, .identityNotAuthorized, "a used code is refused")
    }

    /// A code is the user's own: another identity cannot use it, and that attempt does not
    /// use it up. An expired code is refused.
    func testACodeIsTheUsersOwnAndExpires() async throws {
        let server = try await codeServer()
        let r = await blocking { () -> ([MPinStatus.Code], [MPinStatus.Code]) in
            let (_, _, code, first) = try! Self.firstDevice(server, "owner@example.org")
            let other = try! Self.secondDevice(server)
            var out: [MPinStatus.Code] = []
            let mallory = other.makeNewUser(id: "mallory@example.org")
            out.append(other.startRegistration(mallory, accessCode: "", regCode: code.otp, pmi: "").code)
            let owner = other.makeNewUser(id: "owner@example.org")
            out.append(other.startRegistration(owner, accessCode: "", regCode: "12345", pmi: "").code)   // malformed
            out.append(other.startRegistration(owner, accessCode: "", regCode: code.otp, pmi: "").code)  // still usable
            // A fresh code, left to expire.
            let (mfa, user, _, _) = (try! Self.firstDevice(server, "late@example.org"))
            _ = mfa.startAuthenticationRegCode(user)
            let late = mfa.finishAuthenticationRegCode(user, pin0: secret("1234"), pin1: SecretBytes()).regCode
            Thread.sleep(forTimeInterval: 2.2)
            let device = try! Self.secondDevice(server)
            let lateUser = device.makeNewUser(id: "late@example.org")
            out.append(device.startRegistration(lateUser, accessCode: "", regCode: late.otp, pmi: "").code)
            return (first, out)
        }
        await server.stop()
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .ok])
        XCTAssertEqual(r.1, [.identityNotAuthorized, .identityNotAuthorized, .ok, .identityNotAuthorized])
    }

    /// Asking for a code takes a right PIN: a wrong one is INCORRECT_PIN and counts toward
    /// blocking like a login's.
    func testAWrongPINGetsNoCodeAndCounts() async throws {
        let server = try await codeServer()
        let r = await blocking { () -> ([MPinStatus.Code], String, MPinUserState) in
            let mfa = server.sdk()
            let user = mfa.makeNewUser(id: "guess@example.org")
            var out = [mfa.startRegistration(user, accessCode: "", pmi: "").code]
            try! server.activate("guess@example.org")
            out.append(mfa.confirmRegistration(user).code)
            out.append(mfa.finishRegistration(user, pin0: secret("1234"), pin1: SecretBytes()).code)
            var code = ""
            for pin in ["1111", "2222", "3333"] {
                out.append(mfa.startAuthenticationRegCode(user).code)
                let (status, c) = mfa.finishAuthenticationRegCode(user, pin0: secret(pin), pin1: SecretBytes())
                out.append(status.code)
                code += c.otp
            }
            return (out, code, user.state)
        }
        await server.stop()
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .incorrectPIN, .ok, .incorrectPIN, .ok, .incorrectPIN])
        XCTAssertEqual(r.1, "", "no code for a wrong PIN")
        XCTAssertEqual(r.2, .blocked)
    }
}
