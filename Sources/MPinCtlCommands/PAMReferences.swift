#if canImport(Glibc)
import Glibc
#endif
import MPinCLI

/// The pam.d lines that load pam_mpin, and where libpam finds each module they name.
///
/// libpam resolves a module path that does not start with `/` against its compiled-in module
/// directory, whatever the path looks like: `auth required .build/pam/pam_mpin.so`
/// loads `/lib/x86_64-linux-gnu/security/.build/pam/pam_mpin.so`, which usually does not
/// exist, and the line then fails in a way that names no file. `mpinctl doctor` shows each
/// reference with the file it resolves to.
struct PAMReferences {
    struct Reference: Equatable {
        /// `FILE:LINE` in the pam.d directory.
        let place: String
        /// The module path as written.
        let written: String
        /// The file libpam loads for it.
        let resolved: String
        /// The mpin-pam-helper the module runs: the line's `helper=PATH`, else the installed one.
        var helper: String = PAMReferences.installedHelper
    }

    /// Where pam_mpin.so runs mpin-pam-helper from unless its line says `helper=PATH` (compiled
    /// into the module: the Makefile's HELPERDIR, MPIN_PAM_HELPER in pam/Module/pam_mpin_shim.h).
    static let installedHelper = "/usr/libexec/mpin/mpin-pam-helper"

    /// Why pam_mpin.so would refuse to run `path` (the checks of pam/Module/Helper.swift for a
    /// root login, plus the execute bit), or nil if it would run it: every directory from / down
    /// is a directory, not a symbolic link, owned by root and writable by nobody else; the file
    /// is a regular file, not a symbolic link, owned by root and writable only by root.
    static func helperProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "not an absolute path" }
        if let problem = helperDirectoryProblem(path) { return problem }
        var st = stat()
        guard lstat(path, &st) == 0 else { return "does not exist" }
        guard st.st_mode & S_IFMT != S_IFLNK else { return "is a symbolic link" }
        guard st.st_mode & S_IFMT == S_IFREG else { return "is not a regular file" }
        guard st.st_uid == 0 else { return "is owned by uid \(st.st_uid), not root" }
        guard st.st_mode & 0o022 == 0 else { return "is writable by group or others (mode \(String(st.st_mode & 0o777, radix: 8)))" }
        guard st.st_mode & 0o100 != 0 else { return "is not executable" }
        return nil
    }

    /// Why the directories above `path` (absolute) make pam_mpin.so refuse it, or nil.
    static func helperDirectoryProblem(_ path: String) -> String? {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !components.isEmpty, !path.hasSuffix("/") else { return "is not a regular file" }
        var directory = "/"
        let walked = [""] + components.dropLast()
        for (index, component) in walked.enumerated() {
            if !component.isEmpty { directory += (directory == "/" ? "" : "/") + component }
            var st = stat()
            guard lstat(directory, &st) == 0 else { return "does not exist (\(directory) is missing)" }
            guard st.st_mode & S_IFMT != S_IFLNK else { return "is reached through \(directory), a symbolic link" }
            guard st.st_mode & S_IFMT == S_IFDIR else { return "is reached through \(directory), which is not a directory" }
            guard st.st_uid == 0 else { return "is in \(directory), which is owned by uid \(st.st_uid), not root" }
            // As the module: a directory passed through may be sticky and world-writable (/tmp);
            // the helper's own directory may not.
            let passedThrough = index < walked.count - 1
            guard st.st_mode & 0o022 == 0 || (passedThrough && st.st_mode & S_ISVTX != 0) else {
                return "is in \(directory), which is writable by group or others (mode \(String(st.st_mode & 0o7777, radix: 8)))"
            }
        }
        return nil
    }

    /// Where the system's PAM modules are: the directory holding pam_permit.so (Debian's
    /// multiarch directory, or /lib/security, /lib64/security elsewhere); nil if none does.
    static func moduleDirectory(fileExists: (String) -> Bool = System.fileExists) -> String? {
        var candidates: [String] = []
        for root in ["/lib", "/usr/lib"] {
            let entries = System.directoryEntries(root) ?? []
            for e in entries.sorted() where e.hasSuffix("-linux-gnu") || e.hasSuffix("-linux-gnueabihf") {
                candidates.append("\(root)/\(e)/security")
            }
        }
        candidates += ["/lib/security", "/usr/lib/security", "/lib64/security", "/usr/lib64/security"]
        return candidates.first { fileExists($0 + "/pam_permit.so") }
    }

    /// Every line of the files in `directory` whose module path names pam_mpin, with the file
    /// libpam would load (relative paths joined to `moduleDirectory`).
    static func scan(directory: String, moduleDirectory: String) -> [Reference] {
        let files = (System.directoryEntries(directory) ?? []).sorted()
        var found: [Reference] = []
        for name in files where !name.hasPrefix(".") {
            let path = directory + "/" + name
            guard let bytes = System.readFile(path, limit: 1 << 20), let text = String(validating: bytes, as: UTF8.self) else { continue }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard let module = modulePath(of: String(line)), module.split(separator: "/").last?.hasPrefix("pam_mpin") == true
                        || module.split(separator: "/").last?.hasPrefix("libpam_mpin") == true else { continue }
                let resolved = module.hasPrefix("/") ? module : moduleDirectory + "/" + module
                var reference = Reference(place: "\(name):\(index + 1)", written: module, resolved: resolved)
                if let helper = helperArgument(of: String(line)) { reference.helper = helper }
                found.append(reference)
            }
        }
        return found
    }

    /// The `helper=PATH` argument of a pam.d line, if it has one (the last, as the module reads it).
    static func helperArgument(of line: String) -> String? {
        line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" })
            .last { $0.hasPrefix("helper=") }.map { String($0.dropFirst("helper=".count)) }
    }

    /// The module path of a pam.d line (`[-]type control module [args]`, where control may be a
    /// bracketed list with spaces), or nil for comments, blank lines and `@include`.
    static func modulePath(of line: String) -> String? {
        var rest = Substring(line.prefix { $0 != "#" })
        func nextField() -> Substring? {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard !rest.isEmpty else { return nil }
            if rest.first == "[" {
                guard let close = rest.firstIndex(of: "]") else { return nil }
                defer { rest = rest[rest.index(after: close)...] }
                return rest[...close]
            }
            let field = rest.prefix { $0 != " " && $0 != "\t" }
            rest = rest.dropFirst(field.count)
            return field
        }
        guard let type = nextField(), !type.hasPrefix("@"), nextField() != nil, let module = nextField() else { return nil }
        return String(module)
    }
}
