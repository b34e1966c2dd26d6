import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

/// The client core over the Linux platform: storage refusals and network failures surface as
/// the SDK's STORAGE_ERROR and NETWORK_ERROR with the path or host in the message.
final class LinuxPlatformCoreTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws { directory = try makePrivateDirectory() }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    private func sdk() -> MPinSDK {
        MPinSDK(context: LinuxPlatform(storageDirectory: directory, requiredOwner: geteuid(),
                                       http: .init(timeout: .seconds(5))))
    }

    func testFreshStoreInitialisesAndReadsNothingIntoExistence() {
        XCTAssertEqual(sdk().initialize().code, .ok)
        XCTAssertEqual(directoryEntries(directory), [], "initialising must not write")
    }

    func testInsecureDirectoryIsAStorageErrorNamingIt() {
        chmod(directory, 0o755)
        let status = sdk().initialize()
        XCTAssertEqual(status.code, .storageError)
        XCTAssertTrue(status.message.contains(directory), status.message)
    }

    func testReadableTokenFileIsAStorageErrorNamingIt() throws {
        let platform = LinuxPlatform(storageDirectory: directory, requiredOwner: geteuid())
        try platform.secureStorage.writeText("tokens", "{}")
        chmod(directory + "/secure-tokens", 0o644)
        let status = sdk().initialize()
        XCTAssertEqual(status.code, .storageError)
        XCTAssertTrue(status.message.contains(directory + "/secure-tokens"), status.message)
    }

    func testRefusedBackendIsANetworkError() {
        let port = unusedLocalPort()
        let status = sdk().initialize(config: ["backend": "http://127.0.0.1:\(port)"])
        XCTAssertEqual(status.code, .networkError)
        XCTAssertTrue(status.message.contains("127.0.0.1:\(port)"), status.message)
    }
}
