import MPinClient
import MPinCrypto
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// Logins while every backend node is unreachable, checked by the host's TPM (docs/SECURITY.md,
/// "Offline logins"; README, "Offline logins").
///
/// At an online success (the helper holds the PIN the backend just accepted) a user's record is
/// made, or made again when it is a day old: a random secret sealed in the TPM under an
/// authorisation value derived from the PIN (OfflineKey), the object's public and private parts,
/// the salt, the time of that online success, and a MAC keyed by the secret over all of it.
/// Offline, the PIN typed is turned into the authorisation value again and the TPM unseals the
/// secret only if it is the same PIN, counting wrong values in its dictionary-attack protection;
/// the host counts wrong offline PINs too and stops after `offline_attempts` until the next
/// online success. The record holds nothing a login with the backend could use, and nothing
/// from which the PIN can be found without the TPM.
///
/// The store's values (FileStorage: root's directory, 0600 files, atomic writes, no symbolic
/// link followed): `offline-<h>`, the record, and `offline-<h>-state`, the host's count and the
/// offline logins not yet seen by an online one, where h is the start of the identity's SHA-256.
package final class OfflineLogins {
    /// What this login did offline, for the helper's log line and messages.
    package enum Use: Equatable, Sendable {
        /// Nothing offline happened (online login, or offline logins off).
        case none
        /// The outcome is an offline check's.
        case checked
    }

    let config: LoginConfig
    let storage: any Storage
    /// The store's directory, where offline checks take their lock (`.offline-lock`); nil for
    /// a store that is not a directory (tests).
    let lockDirectory: String?
    let now: () -> Int64
    /// The PAM service, recorded with each offline login.
    package var service = ""
    /// Whether the last login's outcome came from the TPM.
    package private(set) var use = Use.none
    /// Lines for the log (never a secret): enrolment, removal, the offline logins an online one
    /// found recorded.
    package private(set) var notes: [String] = []

    package init(config: LoginConfig, storage: any Storage, lockDirectory: String? = nil,
                now: @escaping () -> Int64 = { Int64(time(nil)) }) {
        self.config = config
        self.storage = storage
        self.lockDirectory = lockDirectory
        self.now = now
    }

    /// How often a record is made again at an online success: its `online` time is then at most
    /// this much older than the last online success (offline_max_age counts from it).
    package static let refreshInterval: Int64 = 86_400

    // MARK: The login's three moments

    /// An online success with `pin`: the host's count starts again, the offline logins recorded
    /// since the last one are noted, and the record is made when missing or a day old.
    /// `report`: what this login sent the backend (`pendingReport`; nil when its registration
    /// cannot send one), and `recorded`: the backend's signed acknowledgment of it (how many
    /// were new to it), nil without one. Reported logins are forgotten only when acknowledged;
    /// otherwise they stay for the next online login (the backend keeps each login once). A
    /// registration that cannot report leaves them to the log alone, as before reports existed.
    func onlineSuccess(identity: String, pin: borrowing SecretBytes, report: OfflineLoginReport? = nil, recorded: Int? = nil) {
        let names = Names(identity)
        if var state = try? readState(names), state.failures > 0 || !state.events.isEmpty {
            if !state.events.isEmpty {
                let seen = state.events
                let told: String
                if report == nil {
                    told = "; not reported (the registration pins no verdict key)"
                    state.events = []
                } else if let recorded, let report {
                    told = "; reported to the backend, which recorded \(recorded) new"
                    state.events = Self.remaining(state.events, after: report)
                } else {
                    told = "; the backend did not acknowledge the report: kept for the next online login"
                }
                notes.append("offline logins since the last online login: "
                    + seen.map { "\($0.time) \($0.service) \($0.outcome)" }.joined(separator: ", ") + told)
            }
            state.failures = 0
            do {
                if state.events.isEmpty { try storage.delete(names.state) } else { try writeState(state, names) }
            } catch { notes.append("offline: cannot reset the host's count: \(error)") }
        }
        if let record = try? readRecord(names), now() - record.online < Self.refreshInterval, now() >= record.online {
            return
        }
        do {
            try enrol(identity: identity, pin: pin, names: names)
            notes.append("offline: record made for \(identity)")
        } catch {
            notes.append("offline: no record made for \(identity): \(error)")
        }
    }

    /// The offline logins recorded on this host since the user's last online login, for the
    /// backend (docs/PROTOCOL.md §4.5.2); nil when there are none. Names outside the report's
    /// alphabet are made to fit it.
    package func pendingReport(identity: String) -> OfflineLoginReport? {
        guard let state = try? readState(Names(identity)), !state.events.isEmpty else { return nil }
        let logins = state.events.suffix(OfflineLoginReport.maxLogins).map {
            OfflineLoginReport.Login(time: $0.time, service: Self.reportName($0.service, maxBytes: OfflineLoginReport.maxServiceBytes),
                                     outcome: $0.outcome, id: $0.id)
        }
        return OfflineLoginReport(host: Self.reportName(Self.hostName(), maxBytes: OfflineLoginReport.maxHostBytes),
                                  logins: Array(logins))
    }

    /// `events` without the logins `report` acknowledged (by their ids); logins recorded since
    /// the report was read stay.
    static func remaining(_ events: [State.Event], after report: OfflineLoginReport) -> [State.Event] {
        let acknowledged = Set(report.logins.map(\.id))
        return events.filter { !acknowledged.contains($0.id) }
    }

    /// This host's name (gethostname), "" when it has none.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `name` with every byte outside letters, digits, `.`, `_` and `-` made `_`, cut to
    /// `maxBytes`; `-` for an empty one.
    static func reportName(_ name: String, maxBytes: Int) -> String {
        let bytes = name.utf8.prefix(maxBytes).map { OfflineLoginReport.isNameByte($0) ? $0 : UInt8(ascii: "_") }
        return bytes.isEmpty ? "-" : String(decoding: bytes, as: UTF8.self)
    }

    /// A signed REVOKED or BLOCKED answer: the user's record goes.
    func forget(identity: String, because why: String) {
        do {
            if try Self.forget(identity: identity, storage: storage) { notes.append("offline: record removed (\(why))") }
        } catch {
            notes.append("offline: cannot remove the record (\(why)): \(error)")
        }
    }

    /// Every node unreachable: the outcome of an offline check of `pin`. Checks run one at a
    /// time on the host (an exclusive lock in the store): logins started in parallel cannot all
    /// read the same count and each spend a guess past `offline_attempts`.
    func unreachable(identity: String, pin: borrowing SecretBytes) -> Login.Outcome {
        var lock: Int32 = -1
        if let lockDirectory {
            switch Self.lock(in: lockDirectory, timeout: .seconds(5)) {
            case .success(let fd): lock = fd
            case .failure(let why): return .unavailable("offline: \(why)")
            }
        }
        defer { if lock >= 0 { close(lock) } }
        return check(identity: identity, pin: pin)
    }

    struct LockFailure: Error, CustomStringConvertible { let description: String }

    /// The exclusive lock on `directory/.offline-lock` (created 0600, no symbolic link followed,
    /// this process's owner's), waiting at most `timeout`; its descriptor, whose closing
    /// releases it.
    static func lock(in directory: String, timeout: Duration) -> Result<Int32, LockFailure> {
        let dir = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dir >= 0 else { return .failure(LockFailure(description: "cannot open the store \(directory) (errno \(errno))")) }
        defer { close(dir) }
        let fd = openat(dir, ".offline-lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return .failure(LockFailure(description: "cannot open \(directory)/.offline-lock (errno \(errno))")) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o077 == 0 else {
            close(fd)
            return .failure(LockFailure(description: "\(directory)/.offline-lock is not a private regular file of this user"))
        }
        let deadline = MonotonicInstant.now + timeout
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, MonotonicInstant.now < deadline else {
                close(fd)
                return .failure(LockFailure(description: "another offline login held the host's lock too long"))
            }
            usleep(5_000)
        }
        return .success(fd)
    }

    private func check(identity: String, pin: borrowing SecretBytes) -> Login.Outcome {
        let names = Names(identity)
        let record: Record
        do {
            guard let r = try readRecord(names) else {
                return .unavailable("offline: no offline record for this user on this host (no online login here since offline logins were turned on)")
            }
            record = r
        } catch {
            return .unavailable("offline: the offline record cannot be read: \(error)")
        }
        guard record.identity == identity else { return .failed("offline: the offline record names another identity") }
        guard isFresh(record.online) else {
            return .unavailable("offline: the last online login on this host is older than offline_max_age")
        }
        var state: State
        do { state = try readState(names) ?? State() } catch {
            return .unavailable("offline: the host's count cannot be read: \(error)")
        }
        guard state.failures < config.offlineAttempts else {
            return .unavailable("offline: refused after \(state.failures) wrong offline PINs; the next online login allows offline logins again")
        }
        let tpm: HostTPM
        do { tpm = try HostTPM(tcti: config.tpm) } catch { return .unavailable("offline: \(error)") }
        let auth: SecretBytes
        do { auth = try OfflineKey.authorisation(pin: pin, identity: identity, salt: record.salt) } catch {
            return .unavailable("offline: \(error)")
        }
        // Counted before the TPM is asked: a helper stopped halfway has still spent the guess.
        let before = state
        state.failures += 1
        do { try writeState(state, names) } catch { return .unavailable("offline: cannot record the attempt: \(error)") }
        use = .checked
        let secret: SecretBytes
        do {
            secret = try tpm.unseal(auth: auth, public: record.publicPart, private: record.privatePart)
        } catch {
            switch error {
            case .wrongAuthorisation:
                addEvent("INCORRECT_PIN", in: &state, names)
                return .wrongPIN
            case .lockout:
                restore(before, names)
                return .unavailable("offline: \(error)")
            case .foreign:
                restore(before, names)
                forget(identity: identity, because: "it does not load in this host's TPM")
                return .failed("offline: \(error)")
            default:
                restore(before, names)
                return .unavailable("offline: \(error)")
            }
        }
        let mac: [UInt8]
        do { mac = try OfflineKey.mac(key: secret, record.signedBytes) } catch {
            restore(before, names)
            return .unavailable("offline: \(error)")
        }
        guard OfflineKey.equal(mac, record.mac) else {
            forget(identity: identity, because: "it fails its check")
            return .failed("offline: the offline record fails its check (changed since it was made)")
        }
        var after = before
        addEvent("OK", in: &after, names)
        return .success
    }

    // MARK: Records

    /// Removes `identity`'s offline values (mpinctl delete, a new registration, a revocation);
    /// whether there was a record.
    @discardableResult
    package static func forget(identity: String, storage: any Storage) throws(StorageError) -> Bool {
        let names = Names(identity)
        let existed = try storage.read(names.record) != nil
        try storage.delete(names.record)
        try storage.delete(names.state)
        return existed
    }

    /// Whether `identity` has a record in `storage`, and the time of the online login it holds.
    package static func recordTime(identity: String, storage: any Storage) throws(StorageError) -> Int64? {
        guard let bytes = try storage.read(Names(identity).record) else { return nil }
        return Record(bytes)?.online
    }

    /// `YYYY-MM-DD HH:MM:SS UTC`, for mpinctl.
    package static func utcText(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return "\(seconds)" }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }

    func isFresh(_ online: Int64) -> Bool {
        let age = now() - online
        return age >= -300 && age <= config.offlineMaxAge
    }

    private func enrol(identity: String, pin: borrowing SecretBytes, names: Names) throws(EnrolmentError) {
        let tpm: HostTPM
        do { tpm = try HostTPM(tcti: config.tpm) } catch { throw EnrolmentError(description: error.description) }
        let salt: [UInt8]
        var secretBytes: [UInt8]
        do {
            salt = try SystemRandom.bytes(16)
            secretBytes = try SystemRandom.bytes(32)
        } catch { throw EnrolmentError(description: "no random bytes: \(error)") }
        let secret = SecretBytes(taking: &secretBytes)
        let auth: SecretBytes
        do { auth = try OfflineKey.authorisation(pin: pin, identity: identity, salt: salt) } catch {
            throw EnrolmentError(description: error.description)
        }
        let parts: (public: [UInt8], private: [UInt8])
        do { parts = try tpm.seal(auth: auth, secret: secret) } catch { throw EnrolmentError(description: error.description) }
        var record = Record(identity: identity, salt: salt, publicPart: parts.public, privatePart: parts.private, online: now(), mac: [])
        do { record.mac = try OfflineKey.mac(key: secret, record.signedBytes) } catch {
            throw EnrolmentError(description: error.description)
        }
        do { try storage.write(names.record, record.encoded) } catch { throw EnrolmentError(description: error.description) }
    }

    struct EnrolmentError: Error, CustomStringConvertible { let description: String }

    private func addEvent(_ outcome: String, in state: inout State, _ names: Names) {
        // The service name goes into a space-separated line and into the report: kept in the
        // report's alphabet from the start.
        let plain = Self.reportName(service, maxBytes: OfflineLoginReport.maxServiceBytes)
        // A random id tells this login apart from every other, also one in the same second.
        let time = now()
        let id = (try? SystemRandom.bytes(OfflineLoginReport.idSize)).map(Hex.encode)
            ?? State.Event.derivedID(time: time, service: plain, outcome: outcome, index: state.events.count)
        state.events.append(.init(time: time, service: plain, outcome: outcome, id: id))
        if state.events.count > State.maxEvents { state.events.removeFirst(state.events.count - State.maxEvents) }
        do { try writeState(state, names) } catch { notes.append("offline: cannot record the login: \(error)") }
    }

    private func restore(_ state: State, _ names: Names) {
        do { try writeState(state, names) } catch { notes.append("offline: cannot restore the host's count: \(error)") }
    }

    private func readRecord(_ names: Names) throws(StorageError) -> Record? {
        guard let bytes = try storage.read(names.record) else { return nil }
        // A record that does not parse is treated as missing: the next online login makes it again.
        return Record(bytes)
    }

    private func readState(_ names: Names) throws(StorageError) -> State? {
        guard let bytes = try storage.read(names.state) else { return nil }
        return State(bytes) ?? State(failures: config.offlineAttempts, events: [])
    }

    private func writeState(_ state: State, _ names: Names) throws(StorageError) {
        try storage.write(names.state, state.encoded)
    }

    /// The store's value names for one identity.
    struct Names {
        let record: String
        let state: String
        init(_ identity: String) {
            let h = Hex.encode(SHA256.hash(Array(identity.utf8)).prefix(16))
            record = "offline-" + h
            state = "offline-" + h + "-state"
        }
    }

    /// A user's record: text lines `key value`, the MAC last, over every line before it.
    struct Record: Equatable {
        var identity: String
        var salt: [UInt8]
        var publicPart: [UInt8]
        var privatePart: [UInt8]
        var online: Int64
        var mac: [UInt8]

        init(identity: String, salt: [UInt8], publicPart: [UInt8], privatePart: [UInt8], online: Int64, mac: [UInt8]) {
            self.identity = identity; self.salt = salt; self.publicPart = publicPart
            self.privatePart = privatePart; self.online = online; self.mac = mac
        }

        var signedBytes: [UInt8] {
            Array(("mpin-offline 1\nidentity \(Hex.encode(Array(identity.utf8)))\nsalt \(Hex.encode(salt))\n"
                + "public \(Hex.encode(publicPart))\nprivate \(Hex.encode(privatePart))\nonline \(online)\n").utf8)
        }

        var encoded: [UInt8] { signedBytes + Array("mac \(Hex.encode(mac))\n".utf8) }

        init?(_ bytes: [UInt8]) {
            let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
            guard lines.count == 7, lines[0] == "mpin-offline 1" else { return nil }
            func value(_ i: Int, _ key: String) -> String? {
                let prefix = key + " "
                guard lines[i].hasPrefix(prefix) else { return nil }
                return String(lines[i].dropFirst(prefix.count))
            }
            guard let id = value(1, "identity").flatMap({ Hex.decode($0) }),
                  let salt = value(2, "salt").flatMap({ Hex.decode($0) }),
                  let pub = value(3, "public").flatMap({ Hex.decode($0) }),
                  let priv = value(4, "private").flatMap({ Hex.decode($0) }),
                  let online = value(5, "online").flatMap({ Int64($0) }),
                  let mac = value(6, "mac").flatMap({ Hex.decode($0) }), mac.count == 32 else { return nil }
            self.init(identity: String(decoding: id, as: UTF8.self), salt: salt, publicPart: pub, privatePart: priv,
                      online: online, mac: mac)
        }
    }

    /// The host's count of wrong offline PINs since the last online success, and the offline
    /// logins since then (time, PAM service, outcome, id). Lines `failures N` and `login T S O ID`.
    struct State: Equatable {
        static let maxEvents = 50
        struct Event: Equatable {
            var time: Int64; var service: String; var outcome: String
            /// OfflineLoginReport.Login.id.
            var id: String

            /// An id from the login's own fields, for a line written before ids were (or when
            /// no random bytes could be had): stable, so a resent report keeps it.
            static func derivedID(time: Int64, service: String, outcome: String, index: Int) -> String {
                Hex.encode(SHA256.hash(Array("\(time) \(service) \(outcome) \(index)".utf8)).prefix(OfflineLoginReport.idSize))
            }
        }
        var failures = 0
        var events: [Event] = []

        init(failures: Int = 0, events: [Event] = []) { self.failures = failures; self.events = events }

        var encoded: [UInt8] {
            var text = "failures \(failures)\n"
            for e in events { text += "login \(e.time) \(e.service) \(e.outcome) \(e.id)\n" }
            return Array(text.utf8)
        }

        /// Nil for a value that does not parse; the caller then counts the limit as reached.
        init?(_ bytes: [UInt8]) {
            let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
            guard let first = lines.first, first.hasPrefix("failures "), let n = Int(first.dropFirst(9)), n >= 0 else { return nil }
            failures = n
            for line in lines.dropFirst() {
                let f = line.split(separator: " ")
                guard f.count == 4 || f.count == 5, f[0] == "login", let t = Int64(f[1]) else { return nil }
                let id = f.count == 5 && OfflineLoginReport.isID(String(f[4])) ? String(f[4])
                    : Event.derivedID(time: t, service: String(f[2]), outcome: String(f[3]), index: events.count)
                events.append(Event(time: t, service: String(f[2]), outcome: String(f[3]), id: id))
            }
        }
    }
}
