import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// The verdict pam_mpin.so compares a configuration file with (ConfigVerdict; the module's side
/// is pam/Module/Unregistered.swift, exercised in Tests/Integration/pam-unregistered-tests.sh).
final class ConfigVerdictTests: XCTestCase {
    private func verdict(_ text: String, path: String = "/etc/mpin/mpin.conf") throws -> ConfigVerdict {
        ConfigVerdict(path: path, file: Array(text.utf8), fileConfig: try LoginConfig.parse(text, file: path))
    }

    func testTheDocumentHoldsThePathTheStoreAndTheFileByteForByte() throws {
        let text = "backend = http://a\n# a comment\nstore = /srv/mpin\r\n"
        let v = try verdict(text)
        XCTAssertEqual(v.document, Array("mpin-config-verdict 1\npath /etc/mpin/mpin.conf\nstore /srv/mpin\nfile \(text.utf8.count)\n\(text)".utf8))
        let absent = ConfigVerdict(path: "/etc/mpin/mpin.conf", file: nil, fileConfig: LoginConfig())
        XCTAssertEqual(absent.document, Array("mpin-config-verdict 1\npath /etc/mpin/mpin.conf\nstore /var/lib/mpin\nfile none\n".utf8))
    }

    func testNoVerdictWhereAnUnregisteredUserGetsAnotherAnswer() throws {
        for line in ["mode = device", "enrol = yes", "require_group = wheel", "exempt_group = wheel", "enrol_identity = %u@example.org"] {
            XCTAssertNil(try verdict("backend = http://a\n\(line)\n").document, line)
        }
        for line in ["mode = token", "mode = auto", "enrol = no", "timeout = 5"] {
            XCTAssertNotNil(try verdict("backend = http://a\n\(line)\n").document, line)
        }
        XCTAssertNil(try verdict("store = /a\n", path: "/etc/x\ny").document, "a path with a newline cannot be named on one line")
    }

    func testOneValuePerPathNamedByItsChecksum() throws {
        XCTAssertEqual(try verdict("", path: "").valueName, "config-verdict-cbf29ce484222325")
        XCTAssertEqual(try verdict("", path: "a").valueName, "config-verdict-af63dc4c8601ec8c")
        XCTAssertNotEqual(try verdict("", path: "/etc/mpin/mpin.conf").valueName, try verdict("", path: "/etc/mpin/mpin.conf2").valueName)
    }

    func testRecordWritesOnlyAChangeAndRemovesAVerdictThatNoLongerHolds() throws {
        let storage = MemoryStorage()
        let kept = try verdict("backend = http://a\n")
        kept.record(in: storage)
        XCTAssertEqual(try storage.read(kept.valueName), kept.document)
        let writes = storage.writes
        kept.record(in: storage)
        XCTAssertEqual(storage.writes, writes, "an unchanged verdict is not written again")
        let other = try verdict("backend = http://a\n", path: "/etc/mpin/other.conf")
        other.record(in: storage)
        try verdict("backend = http://a\nenrol = yes\n").record(in: storage)
        XCTAssertNil(try storage.read(kept.valueName), "enrol = yes removes the path's verdict")
        XCTAssertEqual(try storage.read(other.valueName), other.document, "another path's verdict stays")
    }
}
