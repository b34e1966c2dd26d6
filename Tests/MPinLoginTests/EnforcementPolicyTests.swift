import MPinLogin
import XCTest

/// require_group, exempt_group, nouserok and nouserok_root (pam_mpin(8), OPTIONS): who must pass
/// M-Pin and who is let through. The attacker's side: a user who wants to be skipped.
final class EnforcementPolicyTests: XCTestCase {
    let policy = EnforcementPolicy(requireGroups: ["admins", "wheel"], exemptGroups: ["breakglass"])

    func testStandingFollowsMembership() {
        XCTAssertEqual(policy.standing(memberOf: []), .ordinary)
        XCTAssertEqual(policy.standing(memberOf: ["wheel"]), .required(group: "wheel"))
        XCTAssertEqual(policy.standing(memberOf: ["breakglass"]), .exempt(group: "breakglass"))
        XCTAssertEqual(EnforcementPolicy().standing(memberOf: ["anything"]), .ordinary)
    }

    /// A member of both a required and an exempt group must pass M-Pin: joining an exempt group
    /// never removes a requirement.
    func testRequiredWinsOverExempt() {
        XCTAssertEqual(policy.standing(memberOf: ["breakglass", "admins"]), .required(group: "admins"))
        XCTAssertFalse(policy.mayStepAside(standing: .required(group: "admins")))
        XCTAssertTrue(policy.mayStepAside(standing: .exempt(group: "breakglass")))
        XCTAssertTrue(policy.mayStepAside(standing: .ordinary))
    }

    /// Names match byte for byte: a look-alike group (another case, a suffix, a Kelvin sign, a
    /// decomposed accent) is not the configured one.
    func testLookAlikeGroupNamesDoNotMatch() {
        let p = EnforcementPolicy(exemptGroups: ["Kate", "caf\u{E9}", "ops"])
        for lookAlike in ["\u{212A}ate", "kate", "cafe\u{301}", "ops2", "ops ", "OPS", "op"] {
            XCTAssertEqual(p.standing(memberOf: [lookAlike]), .ordinary, lookAlike)
        }
        XCTAssertEqual(p.standing(memberOf: ["caf\u{E9}"]), .exempt(group: "caf\u{E9}"))
    }

    func testUnregisteredUsers() {
        let strict = EnforcementPolicy()
        XCTAssertEqual(strict.unregistered(uid: 1000, standing: .ordinary), .unknown(reason: "no registration"))
        let lenient = EnforcementPolicy(nouserok: true)
        XCTAssertEqual(lenient.unregistered(uid: 1000, standing: .ordinary), .ignore)
        XCTAssertEqual(lenient.unregistered(uid: nil, standing: .ordinary), .ignore, "no such account")
        // A required member with no registration is refused, whatever nouserok says.
        let required = EnforcementPolicy(requireGroups: ["wheel"], nouserok: true, nouserokRoot: true)
        guard case .refuse = required.unregistered(uid: 1000, standing: .required(group: "wheel")) else {
            return XCTFail("a required member without a registration must be refused")
        }
        guard case .refuse = required.unregistered(uid: 0, standing: .required(group: "wheel")) else {
            return XCTFail("root in a required group without a registration must be refused")
        }
    }

    /// nouserok never covers root without nouserok_root; nouserok_root alone covers no one.
    func testNouserokNeverCoversRootAlone() {
        guard case .unknown = EnforcementPolicy(nouserok: true).unregistered(uid: 0, standing: .ordinary) else {
            return XCTFail("root without a registration must not be ignored under nouserok alone")
        }
        XCTAssertEqual(EnforcementPolicy(nouserok: true, nouserokRoot: true).unregistered(uid: 0, standing: .ordinary), .ignore)
        guard case .unknown = EnforcementPolicy(nouserokRoot: true).unregistered(uid: 0, standing: .ordinary) else {
            return XCTFail("nouserok_root without nouserok must not ignore root")
        }
        guard case .unknown = EnforcementPolicy(nouserokRoot: true).unregistered(uid: 1000, standing: .ordinary) else {
            return XCTFail("nouserok_root without nouserok must not ignore anyone")
        }
    }

    func testGroupsToResolve() {
        XCTAssertEqual(EnforcementPolicy().groupsToResolve, [])
        XCTAssertEqual(EnforcementPolicy(requireGroups: ["a", "b"], exemptGroups: ["b", "c"]).groupsToResolve, ["a", "b", "c"])
    }

    func testOptionsAndConfigKeys() throws {
        let options = ModuleOptions(arguments: ["nouserok", "nouserok_root", "require_group=wheel,admins", "exempt_group=svc"])
        XCTAssertTrue(options.nouserok && options.nouserokRoot)
        XCTAssertEqual(options.unknown, [])
        let config = try options.loadConfig(readFile: { _ in "require_group = staff\nexempt_group = a, b\n" })
        XCTAssertEqual(config.requireGroups, ["wheel", "admins"], "the module line overrides the file")
        XCTAssertEqual(config.exemptGroups, ["svc"])
        let fromFile = try LoginConfig.parse("require_group = staff\nexempt_group = a, b\n", file: "t.conf")
        XCTAssertEqual(fromFile.requireGroups, ["staff"])
        XCTAssertEqual(fromFile.exemptGroups, ["a", "b"])
        let p = EnforcementPolicy(options: options, config: config)
        XCTAssertEqual(p, EnforcementPolicy(requireGroups: ["wheel", "admins"], exemptGroups: ["svc"], nouserok: true, nouserokRoot: true))
        XCTAssertEqual(ModuleOptions(arguments: ["nouserok_root=1"]).unknown, ["nouserok_root=1"])
    }

    func testBadGroupListsAreConfigErrors() {
        for bad in ["", "a,,b", "a b", "wheel:x", "a,\u{7}", " , "] {
            XCTAssertThrowsError(try LoginConfig.parse("exempt_group = \(bad)\n", file: "t.conf"), bad)
            XCTAssertThrowsError(try ModuleOptions(arguments: ["require_group=\(bad)"]).loadConfig(readFile: { _ in nil }), bad)
        }
    }

    /// The name service's answer on this machine: root's primary group is root (gid 0); a group
    /// no system has has no members; a group root is not in does not count.
    func testMembershipThroughTheNameService() throws {
        let root = try UnixAccount.lookup("root")
        let missing = "no-such-group-\(getpid())-mpin"
        XCTAssertEqual(try UnixGroups.membership(of: root, in: ["root", missing]), ["root"])
        XCTAssertEqual(try UnixGroups.membership(of: root, in: []), [])
        let nobody = try UnixAccount.lookup("nobody")
        XCTAssertEqual(try UnixGroups.membership(of: nobody, in: ["root", missing]), [])
    }
}
