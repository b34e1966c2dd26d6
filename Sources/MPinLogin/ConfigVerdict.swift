import MPinClient

/// What pam_mpin.so needs to answer a user with no registration without running the helper
/// (docs/DESIGN.md §2, "A user with no registration"): the configuration file, byte for byte,
/// that this code parsed and found to leave such a user to `nouserok`, kept in the store beside
/// `accounts-index`. The module holds no parser of mpin.conf: it compares the file as it is now
/// with the copy here and, on any difference, runs the helper. So a file changed after the
/// verdict was written is never judged by the old verdict, whatever the change.
///
/// The helper records it (as root) whenever it reads the configuration, and so does mpinctl;
/// a configuration under which such a user gets another answer has its verdict removed.
package struct ConfigVerdict: Sendable, Equatable {
    /// The configuration file's path, as the pam.d line (`config=`) or mpinctl names it.
    package let path: String
    /// The stored document, nil when a user with no registration gets something other than
    /// `nouserok`'s answer under the file.
    package let document: [UInt8]?

    /// The first line; the format's version is part of it.
    package static let header = "mpin-config-verdict 1\n"

    /// The verdict on the file at `path` whose bytes were `file` (nil: the default file does not
    /// exist) and that parsed, alone, as `fileConfig`. Such a user gets another answer under
    /// `mode = device` (the approval is asked of a device), `enrol = yes` (the user is offered
    /// enrolment), a required or exempt group (the user's groups decide) or an `enrol_identity`
    /// (meaningful only with enrolment, so not judged here either).
    ///
    /// The document's lines: the header, `path PATH`, `store DIR` (the file's own store, so that
    /// a line without `store=` finds the accounts where the helper would), `file SIZE` or
    /// `file none`, then the file's bytes.
    package init(path: String, file: [UInt8]?, fileConfig: LoginConfig) {
        self.path = path
        let newline = UInt8(ascii: "\n")
        guard fileConfig.mode != .device, !fileConfig.enrol, fileConfig.requireGroups.isEmpty,
              fileConfig.exemptGroups.isEmpty, fileConfig.enrolIdentity == LoginConfig().enrolIdentity,
              !path.utf8.contains(newline), !fileConfig.store.utf8.contains(newline) else {
            document = nil
            return
        }
        let size = file.map { String($0.count) } ?? "none"
        document = Array("\(Self.header)path \(path)\nstore \(fileConfig.store)\nfile \(size)\n".utf8) + (file ?? [])
    }

    /// The store's value name: one verdict per configuration path (several pam.d lines, or
    /// mpinctl, may name different files with one store), named by the path's FNV-1a checksum,
    /// as pam_mpin.so computes it. The document names the path itself: a checksum that two paths
    /// share only makes them overwrite each other's verdict.
    package var valueName: String {
        let digits = String(AccountMap.fnv1a64(Array(path.utf8)), radix: 16)
        return "config-verdict-" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Brings the store's verdict on this path in line: written when it differs, removed when
    /// there is none. Failures are not reported: without a verdict the module runs the helper,
    /// as it always could.
    package func record(in storage: any Storage) {
        let stored = try? storage.read(valueName)
        if let document {
            guard stored != document else { return }
            try? storage.write(valueName, document)
        } else if stored != nil {
            try? storage.delete(valueName)
        }
    }
}
