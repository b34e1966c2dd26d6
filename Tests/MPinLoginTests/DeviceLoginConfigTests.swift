import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// `mode = device`: its keys, module arguments, the linked map entry, and what the login says.
final class DeviceLoginConfigTests: XCTestCase {
    func testModeAndDeviceTimeoutKeys() throws {
        let defaults = try LoginConfig.parse("backend = http://127.0.0.1:1\n", file: "t.conf")
        XCTAssertEqual(defaults.mode, .auto, "auto by default: device for linked users, token for the others")
        XCTAssertEqual(LoginMode.auto.resolved(linked: true), .device)
        XCTAssertEqual(LoginMode.auto.resolved(linked: false), .token)
        XCTAssertEqual(LoginMode.token.resolved(linked: true), .token)
        XCTAssertEqual(LoginMode.device.resolved(linked: false), .device)
        XCTAssertEqual(defaults.deviceTimeout, 60)
        let c = try LoginConfig.parse("backend = http://127.0.0.1:1\nmode = device\ndevice_timeout = 2.5\n", file: "t.conf")
        XCTAssertEqual(c.mode, .device)
        XCTAssertEqual(c.deviceTimeout, 2.5)
        for bad in ["mode = push", "mode = ", "device_timeout = 0", "device_timeout = 601", "device_timeout = x"] {
            XCTAssertThrowsError(try LoginConfig.parse("backend = http://127.0.0.1:1\n" + bad + "\n", file: "t.conf"), bad) { error in
                XCTAssertEqual((error as? ConfigError)?.line, 2, bad)
            }
        }
    }

    func testModuleArgumentsSetTheMode() throws {
        let options = ModuleOptions(arguments: ["mode=device", "device_timeout=5", "backend=http://127.0.0.1:1"])
        XCTAssertTrue(options.unknown.isEmpty)
        let c = try options.loadConfig { _ throws(ConfigError) in nil }
        XCTAssertEqual(c.mode, .device)
        XCTAssertEqual(c.deviceTimeout, 5)
        XCTAssertThrowsError(try ModuleOptions(arguments: ["mode=sms"]).loadConfig { _ throws(ConfigError) in nil })
    }

    func testLinkedAccountsRoundTripAndOldEntriesAreNotLinked() throws {
        let storage = MemoryStorage()
        let map = AccountMap(storage: storage)
        try map.set(.init(identity: "alice@example.org", backend: "http://mpin.test", linked: true), for: "alice")
        try map.set(.init(identity: "bob@example.org", backend: "http://mpin.test"), for: "bob")
        XCTAssertEqual(try map.account(for: "alice")?.linked, true)
        XCTAssertEqual(try map.account(for: "bob")?.linked, false)
        try storage.writeText(AccountMap.document, #"{"carol": {"identity": "carol@example.org", "backend": "http://mpin.test"}}"#)
        XCTAssertEqual(try map.account(for: "carol"), .init(identity: "carol@example.org", backend: "http://mpin.test"))
    }

    func testDescriptionAndGrouping() {
        XCTAssertEqual(DeviceLogin.describe(host: "db1", unixUser: "alice", service: "sshd", remoteHost: "10.0.0.7"),
                       "host db1, user alice, service sshd, from 10.0.0.7")
        XCTAssertEqual(DeviceLogin.describe(host: "db1", unixUser: "al\nice", service: "sudo"), "host db1, user al?ice, service sudo")
        XCTAssertEqual(DeviceLogin.describe(host: String(repeating: "h", count: 300), unixUser: "a", service: "s").unicodeScalars.count, 128)
        XCTAssertEqual(DeviceLogin.grouped("1234567"), "123-456-7")
        XCTAssertEqual(DeviceLogin.grouped("12345"), "12345")
    }
}
