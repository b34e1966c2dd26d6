import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The built `mpinctl` as an administrator's scripts use it: each subcommand's exit status
/// (0 ok, 1 failed, 3 configuration, 4 not root, 5 storage, 6 backend unavailable, 64 usage)
/// and output, against the built `mpin-server` on 127.0.0.1. What needs a real PAM stack, sshd
/// or sudo stays in Tests/Integration.
final class ExitStatusTests: XCTestCase {
    private var scratch: PrivateDirectory?
    private var server: LocalServer?

    override func setUpWithError() throws {
        scratch = try PrivateDirectory("mpinctl-test")
    }

    override func tearDown() {
        server?.stop()
        server = nil
        scratch?.remove()
        scratch = nil
        super.tearDown()
    }

    private var directory: PrivateDirectory {
        get throws { try XCTUnwrap(scratch) }
    }

    /// mpinctl with `arguments`, `input` on stdin.
    private func ctl(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
        try runProcess(try builtExecutable("mpinctl").path, arguments, input: input)
    }

    /// The store mpinctl manages must belong to root, and mpinctl checks that it runs as root.
    private func requireRoot() throws {
        guard getuid() == 0 else {
            throw XCTSkip("mpinctl manages a root-owned store and refuses to run as another user: run the tests as root")
        }
    }

    /// A running server, a private store and a config naming both; returns the config's path.
    private func startBackend() throws -> String {
        let dir = try directory
        let started = try LocalServer(in: dir)
        server = started
        guard mkdir(dir.appending("store"), 0o700) == 0 else { throw SetupFailure("mkdir store: errno \(errno)") }
        return try dir.write("mpin.conf", "backend = \(started.url)\nstore = \(dir.appending("store"))\ntimeout = 3\n"
                             + "verdict_key = \(started.verdictKey)\n")
    }

    /// Registers `user` as `identity` with `pin`, which must succeed.
    private func register(_ config: String, _ user: String, _ identity: String, pin: String,
                          file: StaticString = #filePath, line: UInt = #line) throws {
        let url = try XCTUnwrap(server).url
        let r = try ctl(["--config", config, "register", user, "--identity", identity, "--pin-stdin"], input: pin + "\n")
        XCTAssertEqual(r.status, 0, "register \(user): \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.lines.last, "REGISTERED \(user) as \(identity) on \(url)", file: file, line: line)
    }

    // MARK: Another user

    /// As root the check runs as nobody, from a copy nobody can reach (the checkout may sit
    /// under a 0700 home directory); as anyone else it runs as that user.
    func testRefusesToRunAsNonRootButPrintsItsVersion() throws {
        let built = try builtExecutable("mpinctl")
        let run: ([String]) throws -> ProcessResult
        if getuid() == 0 {
            let reachable = try copyReachableByOthers(built)
            addTeardownBlock { reachable.directory.remove() }
            run = { try runProcess("/usr/sbin/runuser", ["-u", "nobody", "--", reachable.path] + $0) }
        } else {
            run = { try runProcess(built.path, $0) }
        }

        let list = try run(["list"])
        XCTAssertEqual(list.status, 4, "list as non-root: \(list.stderr)")
        XCTAssertTrue(list.stderr.contains("NOT_ROOT"), list.stderr)
        XCTAssertEqual(list.stdout, "")
        let version = try run(["version"])
        XCTAssertEqual(version.status, 0, "version as non-root: \(version.stderr)")
        XCTAssertTrue(version.stdout.hasPrefix("mpinctl "), version.stdout)
    }

    // MARK: Usage and configuration

    func testUsageErrorIs64() throws {
        let r = try ctl(["--config", "/nonexistent/mpin.conf", "register", "dave"])
        XCTAssertEqual(r.status, 64, "register without --identity")
        XCTAssertTrue(r.stderr.contains("--identity"), r.stderr)
        XCTAssertEqual(try ctl(["no-such-command"]).status, 64)
    }

    func testConfigurationAndStorageErrors() throws {
        try requireRoot()
        let dir = try directory
        let missing = try ctl(["--config", dir.appending("nope.conf"), "list"])
        XCTAssertEqual(missing.status, 3, "a missing config file: \(missing.stderr)")
        XCTAssertTrue(missing.stderr.contains("CONFIG_ERROR"), missing.stderr)

        let bad = try dir.write("bad.conf", "backend = http://127.0.0.1:1\nbogus = 2\n")
        let badLine = try ctl(["--config", bad, "list"])
        XCTAssertEqual(badLine.status, 3, "a bad config line")
        XCTAssertTrue(badLine.stderr.contains("bad.conf:2: unknown key"), "names FILE:LINE: \(badLine.stderr)")

        // A config others can write could point logins at any server.
        let open = try dir.write("open.conf", "backend = http://127.0.0.1:1\n", mode: 0o664)
        let groupWritable = try ctl(["--config", open, "list"])
        XCTAssertEqual(groupWritable.status, 3, "a group-writable config")
        XCTAssertTrue(groupWritable.stderr.contains("not writable by group or others"), groupWritable.stderr)

        let store = dir.appending("open-store")
        XCTAssertEqual(mkdir(store, 0o755), 0)
        XCTAssertEqual(chmod(store, 0o755), 0)  // whatever the umask
        let good = try dir.write("good.conf", "backend = http://127.0.0.1:1\n")
        let insecure = try ctl(["--config", good, "--store", store, "list"])
        XCTAssertEqual(insecure.status, 5, "an insecure --store: \(insecure.stderr)")
        XCTAssertTrue(insecure.stderr.contains(store), "names the store: \(insecure.stderr)")
    }

    // MARK: Against a server

    func testTestBackend() throws {
        try requireRoot()
        let config = try startBackend()
        let closed = try ctl(["--config", config, "test-backend", "http://127.0.0.1:\(try closedLocalPort())"])
        XCTAssertEqual(closed.status, 6, "a closed port is unavailable: \(closed.stderr)")
        let url = try XCTUnwrap(server).url
        let up = try ctl(["--config", config, "test-backend", url])
        XCTAssertEqual(up.status, 0, up.stderr)
        XCTAssertEqual(up.stdout, "OK \(url)\n")
    }

    func testRegisterListShowBackendsDelete() throws {
        try requireRoot()
        let config = try startBackend()
        let url = try XCTUnwrap(server).url
        try register(config, "alice", "alice@example.org", pin: "1234")
        try register(config, "carol", "carol@example.org", pin: "4321")

        let twice = try ctl(["--config", config, "register", "alice", "--identity", "a2@example.org", "--pin-stdin"],
                            input: "1234\n")
        XCTAssertEqual(twice.status, 1, "registering alice twice")
        XCTAssertTrue(twice.stderr.contains("mpinctl delete alice"), "says what to do: \(twice.stderr)")

        let list = try ctl(["--config", config, "list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(list.lines.sorted(), ["alice\talice@example.org\t\(url)\tREGISTERED",
                                            "carol\tcarol@example.org\t\(url)\tREGISTERED"])

        let show = try ctl(["--config", config, "show", "alice"])
        XCTAssertEqual(show.status, 0, show.stderr)
        XCTAssertEqual(show.lines, ["user: alice", "identity: alice@example.org", "backend: \(url)", "state: REGISTERED"])
        let unknown = try ctl(["--config", config, "show", "nobody"])
        XCTAssertEqual(unknown.status, 1, "show of an unknown user")
        XCTAssertTrue(unknown.stderr.contains("USER_UNKNOWN"), unknown.stderr)

        let backends = try ctl(["--config", config, "backends"])
        XCTAssertEqual(backends.status, 0, backends.stderr)
        XCTAssertTrue(backends.lines.contains { $0.contains(url.dropFirst("http://".count)) }, backends.stdout)

        XCTAssertEqual(try ctl(["--config", config, "delete", "carol"]).status, 0, "delete carol")
        XCTAssertEqual(try ctl(["--config", config, "delete", "carol"]).status, 1, "delete of an unknown user")
        XCTAssertEqual(try ctl(["--config", config, "list"]).lines, ["alice\talice@example.org\t\(url)\tREGISTERED"])
    }

    func testAuthOTPAndBlocking() throws {
        try requireRoot()
        let config = try startBackend()
        try register(config, "alice", "alice@example.org", pin: "1234")
        try register(config, "carol", "carol@example.org", pin: "4321")
        func auth(_ user: String, _ pin: String?) throws -> ProcessResult {
            try ctl(["--config", config, "auth", user, "--pin-stdin"], input: pin.map { $0 + "\n" })
        }

        let right = try auth("alice", "1234")
        XCTAssertEqual(right.status, 0, right.stderr)
        XCTAssertEqual(right.stdout, "OK\n")
        let wrong = try auth("alice", "1299")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.stdout, "INCORRECT_PIN\n")
        let noPIN = try auth("alice", nil)
        XCTAssertEqual(noPIN.status, 1, "no PIN on stdin")
        XCTAssertTrue(noPIN.stderr.contains("PIN_INPUT_CANCELED"), noPIN.stderr)
        XCTAssertFalse(right.stderr.contains("1234") || right.stdout.contains("1234"), "the PIN is not echoed")

        let otp = try ctl(["--config", config, "otp", "alice", "--pin-stdin"], input: "1234\n")
        XCTAssertEqual(otp.status, 0, otp.stderr)
        XCTAssertNotNil(otp.stdout.range(of: #"^[0-9]{6} \(valid for [0-9]+ s\)\n$"#, options: .regularExpression), otp.stdout)

        // Three wrong PINs block the identity on the server; the store says so.
        XCTAssertEqual(try auth("carol", "1111").stdout, "INCORRECT_PIN\n")
        XCTAssertEqual(try auth("carol", "2222").stdout, "INCORRECT_PIN\n")
        let third = try auth("carol", "3333")
        XCTAssertEqual(third.status, 1)
        XCTAssertEqual(third.stdout, "BLOCKED\n")
        XCTAssertEqual(try auth("carol", "4321").status, 1, "a blocked identity fails even with the right PIN")

        let json = try ctl(["--config", config, "list", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: rows.compactMap { r in r["user"].map { ($0, r["state"] ?? "") } }),
                       ["alice": "REGISTERED", "carol": "BLOCKED"])
    }

    /// `mpinctl regcode USER`: a PIN proof, then a 12-digit registration code with which another
    /// device registers the same identity, once; a wrong PIN gets none.
    func testRegCode() throws {
        try requireRoot()
        let config = try startBackend()
        try register(config, "alice", "alice@example.org", pin: "1234")
        let wrong = try ctl(["--config", config, "regcode", "alice", "--pin-stdin"], input: "9999\n")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("INCORRECT_PIN"), wrong.stderr)
        let r = try ctl(["--config", config, "regcode", "alice", "--pin-stdin"], input: "1234\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        let code = String(r.stdout.prefix(12))
        XCTAssertTrue(code.count == 12 && code.allSatisfy(\.isNumber), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("register the other device with it for alice@example.org)\n"), r.stdout)
        // The other device's registration request (docs/MFA.md §8): accepted once, then refused.
        let url = try XCTUnwrap(server).url + "/rps/user"
        func registerElsewhere() throws -> Int {
            var request = URLRequest(url: try XCTUnwrap(URL(string: url)))
            request.httpMethod = "PUT"
            request.httpBody = Data(#"{"userId": "alice@example.org", "mobile": 1, "regCode": "\#(code)"}"#.utf8)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var status = 0
            URLSession.shared.dataTask(with: request) { _, response, _ in
                status = (response as? HTTPURLResponse)?.statusCode ?? 0
                done.signal()
            }.resume()
            _ = done.wait(timeout: .now() + 10)
            return status
        }
        XCTAssertEqual(try registerElsewhere(), 200)
        XCTAssertEqual(try registerElsewhere(), 403, "a registration code is single use")
    }

    /// One line per check, `ok  ` or `FAIL` with a fix; the status is 1 exactly when a check
    /// failed. Whether pam_mpin.so is installed depends on the machine, so the module line is
    /// checked against the file system.
    func testDoctor() throws {
        try requireRoot()
        let config = try startBackend()
        let pamDir = try directory.appending("pam.d-empty")
        XCTAssertEqual(mkdir(pamDir, 0o755), 0)
        let r = try ctl(["--config", config, "doctor", "--pam-dir", pamDir])
        let names = r.lines.map { line in String(line.dropFirst(5).prefix { $0 != ":" }) }
        XCTAssertEqual(names, ["config", "root", "store", "module", "pam.d", "registrations", "offline", "libcurl", "backend", "tls", "clock"], r.stdout)
        XCTAssertTrue(r.lines.contains("ok   pam.d: no file in \(pamDir) uses pam_mpin yet"), r.stdout)
        XCTAssertTrue(r.lines.allSatisfy { $0.hasPrefix("ok   ") || $0.hasPrefix("FAIL ") }, r.stdout)
        XCTAssertTrue(r.lines.allSatisfy { !$0.hasPrefix("FAIL ") || $0.contains(" -- fix: ") }, "every failure says what to do")
        // The server's Date header was read (RFC 7231) and compared with this machine's clock,
        // which is the server's own: whole seconds, and the server's date may lag by one.
        XCTAssertTrue(r.lines.contains { line in
            ["-1", "0", "1", "2"].contains { line == "ok   clock: skew \($0) s against the server" }
        }, r.stdout)
        for check in ["config", "root", "store", "backend", "tls", "libcurl"] {
            XCTAssertTrue(r.lines.contains { $0.hasPrefix("ok   \(check):") }, "\(check) passes: \(r.stdout)")
        }
        let installed = try moduleDirectory().map { FileManager.default.fileExists(atPath: $0 + "/pam_mpin.so") } ?? false
        XCTAssertTrue(r.lines.contains { $0.hasPrefix(installed ? "ok   module:" : "FAIL module:") }, r.stdout)
        let failed = r.lines.contains { $0.hasPrefix("FAIL ") }
        XCTAssertEqual(r.status, failed ? 1 : 0, r.stdout)
    }

    /// The directory of the system's PAM modules, found as doctor finds it (where pam_permit.so is).
    private func moduleDirectory() throws -> String? {
        var candidates: [String] = []
        for root in ["/lib", "/usr/lib"] {
            for e in ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted() where e.hasSuffix("-linux-gnu") {
                candidates.append("\(root)/\(e)/security")
            }
        }
        candidates += ["/lib/security", "/usr/lib/security", "/lib64/security"]
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/pam_permit.so") }
    }

    /// Doctor shows every pam.d line that loads pam_mpin with the file libpam resolves it to: a
    /// relative path is taken from the module directory (and fails when nothing is there), an
    /// absolute path is itself; comments, includes and other modules are not references.
    func testDoctorShowsWherePamDotDReferencesResolve() throws {
        try requireRoot()
        let config = try startBackend()
        let dir = try directory
        let pamDir = dir.appending("pam.d")
        XCTAssertEqual(mkdir(pamDir, 0o755), 0)
        XCTAssertEqual(mkdir(dir.appending("lib"), 0o755), 0)
        let built = try dir.write("lib/pam_mpin.so", "", mode: 0o644)
        _ = try dir.write("pam.d/sshd", """
            # auth required pam_mpin.so (a comment)
            @include common-auth
            auth [success=done ignore=ignore default=die] .build/release/libpam_mpin.so nouserok
            auth required pam_permit.so
            """, mode: 0o644)
        // The helper each line makes the module run, checked as pam_mpin.so checks it: every
        // directory above it root's and writable only by root, no symbolic link on the way
        // (docs/SECURITY.md §6.3). /tmp is writable by everyone, so the trusted helpers live in
        // a directory beside the built mpinctl (whose directories the integration tests
        // already require to be root's). A root-owned 0755 file there passes, and so does one in
        // root's directories below /tmp (a sticky directory may be passed through); a
        // group-writable one, a symbolic link to the good one, the good one through a
        // symbolically linked directory, and one directly in a sticky world-writable directory
        // are each named with the reason.
        // The real path: SwiftPM's .build/release is a symbolic link, which the check refuses.
        let products = try XCTUnwrap(realpath(try builtExecutable("mpinctl").deletingLastPathComponent().path, nil)
            .map { resolved in defer { free(resolved) }; return String(cString: resolved) })
        var template = Array("\(products)/doctor-helpers-XXXXXX".utf8CString)
        let trusted = try XCTUnwrap(mkdtemp(&template).map { String(cString: $0) }, "mkdtemp in \(products)")
        defer { try? FileManager.default.removeItem(atPath: trusted) }
        XCTAssertEqual(chmod(trusted, 0o755), 0)
        let helper = trusted + "/mpin-pam-helper"
        let writable = trusted + "/writable-helper"
        for file in [helper, writable] {
            try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: file))
            XCTAssertEqual(chmod(file, 0o755), 0)
        }
        XCTAssertEqual(chmod(writable, 0o775), 0)
        let link = trusted + "/link-helper"
        XCTAssertEqual(symlink(helper, link), 0)
        let linkedDirectory = trusted + "/linked"
        XCTAssertEqual(symlink(trusted, linkedDirectory), 0)
        let inTmp = try dir.write("lib/tmp-helper", "#!/bin/sh\n", mode: 0o755)
        // A sticky world-writable directory (as /tmp) may be passed through, not hold the helper.
        let open = trusted + "/open"
        XCTAssertEqual(mkdir(open, 0o755), 0)
        XCTAssertEqual(chmod(open, 0o1777), 0)
        let inOpen = open + "/helper"
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: inOpen))
        XCTAssertEqual(chmod(inOpen, 0o755), 0)
        _ = try dir.write("pam.d/sudo", "auth\trequired\t\(built) debug helper=\(helper)\n", mode: 0o644)
        _ = try dir.write("pam.d/su", """
            auth required \(built) helper=\(writable)
            auth required \(built) helper=\(link)
            auth required \(built) helper=\(linkedDirectory)/mpin-pam-helper
            auth required \(built) helper=\(inTmp)
            auth required \(built) helper=\(inOpen)
            """, mode: 0o644)
        let r = try ctl(["--config", config, "doctor", "--pam-dir", pamDir])
        let pamLines = r.lines.filter { $0.dropFirst(5).hasPrefix("pam.d:") && !$0.contains("/su:") }
        XCTAssertEqual(pamLines.count, 2, r.stdout)
        XCTAssertTrue(r.lines.contains("ok   helper: \(helper)"), r.stdout)
        XCTAssertTrue(r.lines.contains("FAIL helper: \(writable) is writable by group or others (mode 775) -- fix: chown root \(writable) && chmod 755 \(writable)"), r.stdout)
        XCTAssertTrue(r.lines.contains("FAIL helper: \(link) is a symbolic link -- fix: name the file itself in helper= (pam_mpin.so follows no symbolic link)"), r.stdout)
        let directoryFix = "keep the helper in directories owned by root, writable only by root, named without symbolic links"
        XCTAssertTrue(r.lines.contains("FAIL helper: \(linkedDirectory)/mpin-pam-helper is reached through \(linkedDirectory), a symbolic link -- fix: \(directoryFix)"), r.stdout)
        XCTAssertTrue(r.lines.contains("ok   helper: \(inTmp)"), "below /tmp, in root's own directories: \(r.stdout)")
        XCTAssertTrue(r.lines.contains("FAIL helper: \(inOpen) is in \(open), which is writable by group or others (mode 1777) -- fix: \(directoryFix)"), r.stdout)
        let moduleDir = try XCTUnwrap(try moduleDirectory(), "no PAM module directory on this machine")
        XCTAssertEqual(pamLines.first,
                       "FAIL pam.d: \(pamDir)/sshd:3: .build/release/libpam_mpin.so loads \(moduleDir)/.build/release/libpam_mpin.so, "
                       + "which does not exist -- fix: write `pam_mpin.so` (installed) or an absolute path; relative paths are taken from \(moduleDir)")
        XCTAssertEqual(pamLines.last, "ok   pam.d: \(pamDir)/sudo:1: \(built) loads \(built) (not the installed module)")
        XCTAssertEqual(r.status, 1, "a reference to a missing file is a failure")
    }

    /// `mpinctl register-dvs`, `sign` and `verify` (docs/MFA.md §14.4): a file signed with the
    /// signing PIN verifies against the backend, also as a non-root user; a changed file, a
    /// changed signature and a wrong signing PIN do not; three wrong signing PINs block the key;
    /// a changed signature is "invalid signature", counts toward nothing, and the signature made
    /// before the block still verifies after it (docs/SECURITY.md §5).
    func testRegisterDVSSignAndVerify() throws {
        try requireRoot()
        let config = try startBackend()
        let dir = try directory
        let url = try XCTUnwrap(server).url
        try register(config, "alice", "alice@example.org", pin: "1234")
        let file = try dir.write("release.tar.gz", "pretend this is a tarball\n", mode: 0o644)

        let early = try ctl(["--config", config, "sign", "alice", file, "--pin-stdin"], input: "2468\n")
        XCTAssertEqual(early.status, 1, "no signing key yet")
        XCTAssertTrue(early.stderr.contains("FLOW_ERROR"), early.stderr)
        let wrongLogin = try ctl(["--config", config, "register-dvs", "alice", "--pin-stdin"], input: "9999\n2468\n")
        XCTAssertEqual(wrongLogin.status, 1)
        XCTAssertTrue(wrongLogin.stderr.contains("INCORRECT_PIN"), wrongLogin.stderr)
        let enrol = try ctl(["--config", config, "register-dvs", "alice", "--pin-stdin"], input: "1234\n2468\n")
        XCTAssertEqual(enrol.status, 0, enrol.stderr)
        XCTAssertEqual(enrol.lines.last, "SIGNING KEY ENROLLED for alice (alice@example.org)")

        let signed = try ctl(["--config", config, "sign", "alice", file, "--pin-stdin"], input: "2468\n")
        XCTAssertEqual(signed.status, 0, signed.stderr)
        XCTAssertEqual(signed.lines.last, "SIGNED \(file) as alice@example.org: \(file).mpinsig")
        var info = stat()
        XCTAssertEqual(stat(file + ".mpinsig", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o644)
        let signature = try String(contentsOfFile: file + ".mpinsig", encoding: .utf8)
        let fields = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(signature.utf8)) as? [String: Any])
        XCTAssertEqual(Set(fields.keys), ["hash", "mpinId", "u", "v", "publicKey", "timestamp"])

        // Verification needs no root and no store: run it as nobody, from a reachable copy.
        let copy = try copyReachableByOthers(try builtExecutable("mpinctl"))
        defer { copy.directory.remove() }
        XCTAssertEqual(chmod(dir.path, 0o711), 0)
        // A configuration without a store: verify reads only the backend (here overridden).
        let verifyConfig = try dir.write("verify.conf", "backend = http://127.0.0.1:1\n", mode: 0o644)
        func verify(_ target: String, _ sig: String) throws -> ProcessResult {
            try runProcess("/usr/sbin/runuser", ["-u", "nobody", "--", copy.path, "--config", verifyConfig,
                                                 "verify", target, sig, "--backend", url])
        }
        let good = try verify(file, file + ".mpinsig")
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.hasPrefix("VALID signed by alice@example.org at "), good.stdout)

        let other = try dir.write("other.tar.gz", "another tarball\n", mode: 0o644)
        let changedFile = try verify(other, file + ".mpinsig")
        XCTAssertEqual(changedFile.status, 1)
        XCTAssertEqual(changedFile.stdout, "INVALID\n")
        // The signature moved to another file's hash: the backend refuses it.
        let otherHash = try ctl(["--config", config, "sign", "alice", other, "--pin-stdin"], input: "2468\n")
        XCTAssertEqual(otherHash.status, 0, otherHash.stderr)
        // U of the other file's signature with this file's hash, V and key: not a signature.
        let otherFields = try XCTUnwrap(try JSONSerialization.jsonObject(
            with: Data(try String(contentsOfFile: other + ".mpinsig", encoding: .utf8).utf8)) as? [String: Any])
        var forged = fields
        forged["u"] = otherFields["u"]
        XCTAssertNotEqual(forged["u"] as? String, fields["u"] as? String)
        let forgedPath = try dir.write("forged.mpinsig", String(decoding: try JSONSerialization.data(withJSONObject: forged), as: UTF8.self),
                                       mode: 0o644)
        let changedSignature = try verify(file, forgedPath)
        XCTAssertEqual(changedSignature.status, 1, changedSignature.stdout)
        XCTAssertEqual(changedSignature.stdout, "INVALID\n")
        XCTAssertTrue(changedSignature.stderr.contains("invalid signature"), changedSignature.stderr)
        XCTAssertFalse(changedSignature.stderr.contains("PIN"), changedSignature.stderr)
        let garbage = try verify(file, try dir.write("garbage.mpinsig", "{}", mode: 0o644))
        XCTAssertEqual(garbage.status, 1)

        // Wrong signing PINs: the forged copy above (a seen U) was not counted; the third in a row blocks the key.
        for pin in ["1234", "1111"] {
            let wrong = try ctl(["--config", config, "sign", "alice", file, "--pin-stdin"], input: pin + "\n")
            XCTAssertEqual(wrong.status, 1)
            XCTAssertTrue(wrong.stderr.contains("INCORRECT_PIN"), wrong.stderr)
        }
        let blocking = try ctl(["--config", config, "sign", "alice", file, "--pin-stdin"], input: "0000\n")
        XCTAssertTrue(blocking.stderr.contains("blocked"), blocking.stderr)
        let after = try ctl(["--config", config, "sign", "alice", file, "--pin-stdin"], input: "2468\n")
        XCTAssertTrue(after.stderr.contains("FLOW_ERROR"), "the blocked key is forgotten: \(after.stderr)")
        let before = try verify(file, file + ".mpinsig")
        XCTAssertEqual(before.status, 0, "a signature seen valid before the block still verifies: \(before.stderr)")
        // A signature with a new U on the blocked key: not checked, and not called a wrong PIN.
        var fresh = fields
        fresh["u"] = fields["v"]
        let freshPath = try dir.write("fresh.mpinsig", String(decoding: try JSONSerialization.data(withJSONObject: fresh), as: UTF8.self),
                                      mode: 0o644)
        let unchecked = try verify(file, freshPath)
        XCTAssertEqual(unchecked.status, 1)
        XCTAssertTrue(unchecked.stderr.contains("invalid signature: the signing key is blocked"), unchecked.stderr)
        // Logins are not affected.
        let login = try ctl(["--config", config, "auth", "alice", "--pin-stdin"], input: "1234\n")
        XCTAssertEqual(login.status, 0, login.stderr)
    }
}
