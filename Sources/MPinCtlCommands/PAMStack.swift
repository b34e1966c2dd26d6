/// A service's `auth` stack as libpam builds it from a pam.d directory: `@include FILE` and
/// `auth include FILE` inlined, `auth substack FILE` nested one level down, each module line with
/// its control parsed into the actions libpam takes per return code. `mpinctl doctor` runs this
/// model (PAMStackRun) to say what a login does when pam_mpin cannot decide; it never loads a
/// module. Read from Linux-PAM's documented pam.conf(5) semantics.

/// The return codes whose handling decides whether pam_mpin fails open; libpam's token names.
package enum PAMCode: String, CaseIterable, Sendable {
    case success
    case authErr = "auth_err"
    case ignore
    case authinfoUnavail = "authinfo_unavail"
    case userUnknown = "user_unknown"
    /// libpam's "must fail" code: what a broken line or an undecided stack ends with.
    case permDenied = "perm_denied"
}

/// What libpam does with a module's return code (pam.conf(5) `value=action`).
package enum PAMAction: Equatable, Sendable {
    case ignore, ok, done, bad, die, reset
    /// Skip the next N modules of the same level (a substack counts as one).
    case jump(Int)

    init?(token: String) {
        switch token {
        case "ignore": self = .ignore
        case "ok": self = .ok
        case "done": self = .done
        case "bad": self = .bad
        case "die": self = .die
        case "reset": self = .reset
        default:
            guard let n = Int(token), n > 0 else { return nil }
            self = .jump(n)
        }
    }
}

/// The control field of a line: a keyword or a bracketed `[value=action ...]` list.
package struct PAMControl: Equatable, Sendable {
    package let written: String
    var actions: [PAMCode: PAMAction]

    package func action(for code: PAMCode) -> PAMAction { actions[code] ?? .bad }

    /// `required`, `requisite`, `sufficient`, `optional` or a bracketed list; nil for anything
    /// else. libpam treats a list it cannot parse as `bad` for every code, and so does this.
    package init?(_ text: String) {
        written = text
        func fill(_ pairs: [PAMCode: PAMAction], default d: PAMAction) -> [PAMCode: PAMAction] {
            var all: [PAMCode: PAMAction] = [:]
            for code in PAMCode.allCases { all[code] = pairs[code] ?? d }
            return all
        }
        switch text.lowercased() {
        case "required": actions = fill([.success: .ok, .ignore: .ignore], default: .bad)
        case "requisite": actions = fill([.success: .ok, .ignore: .ignore], default: .die)
        case "sufficient": actions = fill([.success: .done], default: .ignore)
        case "optional": actions = fill([.success: .ok], default: .ignore)
        default:
            guard text.hasPrefix("["), text.hasSuffix("]") else { return nil }
            // As libpam: a `default=` fills only what is still unset when it is read, later
            // pairs override, and whatever is left unset at the end is `bad`.
            var set: [PAMCode: PAMAction] = [:]
            var malformed = false
            for pair in text.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).lowercased() }
                guard parts.count == 2, let action = PAMAction(token: parts[1]) else { malformed = true; break }
                if parts[0] == "default" {
                    for code in PAMCode.allCases where set[code] == nil { set[code] = action }
                } else if let code = PAMCode(rawValue: parts[0]) {
                    set[code] = action
                }  // codes pam_mpin never returns and no module here is modelled to return
            }
            actions = malformed ? fill([:], default: .bad) : fill(set, default: .bad)
        }
    }
}

/// One `auth` module line.
package struct PAMModuleLine: Equatable, Sendable {
    /// `FILE:LINE` in the pam.d directory.
    package let place: String
    package let control: PAMControl
    /// The module path as written.
    package let module: String
    package let arguments: [String]

    /// The module's name without directory and `.so` (`pam_unix`, `pam_mpin`).
    package var name: String {
        let base = module.split(separator: "/").last.map(String.init) ?? module
        return base.hasSuffix(".so") ? String(base.dropLast(3)) : base
    }

    /// Whether this line loads pam_mpin (as PAMReferences recognises it; a build tree's
    /// libpam_mpin.so too).
    package var isMPin: Bool { name.hasPrefix("pam_mpin") || name.hasPrefix("libpam_mpin") }

    package func has(_ argument: String) -> Bool { arguments.contains(argument) }
    package func hasArgument(prefix: String) -> Bool { arguments.contains { $0.hasPrefix(prefix) } }
}

/// The flattened stack, as libpam keeps it: each element with its substack depth.
package struct PAMStack: Sendable {
    package enum Element: Equatable, Sendable {
        case module(PAMModuleLine)
        /// The `substack` line itself: libpam runs nothing for it; its lines follow one level down.
        case substack(place: String)
        /// A line libpam cannot use (an unknown control, an include that is missing or too
        /// deep): it fails the stack as libpam's "must fail" handler does.
        case broken(place: String, problem: String)
    }
    package var elements: [(element: Element, level: Int)] = []

    package var modules: [PAMModuleLine] {
        elements.compactMap { if case .module(let m) = $0.element { m } else { nil } }
    }
    package var problems: [String] {
        elements.compactMap { if case .broken(let place, let problem) = $0.element { "\(place): \(problem)" } else { nil } }
    }

    /// libpam's limit on nested substacks (PAM_SUBSTACK_MAX_LEVEL); also bounds include loops.
    static let maxDepth = 16

    /// The `auth` stack of `service`. `read(name)` gives a pam.d file's text (`name` as written
    /// after `@include`/`include`/`substack`, relative to the directory or absolute), nil if
    /// it does not exist.
    package static func auth(service: String, read: (String) -> String?) -> PAMStack {
        var stack = PAMStack()
        guard let text = read(service) else { return stack }
        stack.append(file: service, text: text, level: 0, depth: 0, read: read)
        return stack
    }

    private mutating func append(file: String, text: String, level: Int, depth: Int, read: (String) -> String?) {
        for (number, line) in Self.logicalLines(text) {
            let place = "\(file):\(number)"
            let fields = Self.fields(line)
            guard let first = fields.first else { continue }
            func nested(_ name: String?, substack: Bool) {
                guard let name else { elements.append((.broken(place: place, problem: "names no file"), level)); return }
                guard depth + 1 < Self.maxDepth else {
                    elements.append((.broken(place: place, problem: "includes nested too deep (a loop?)"), level)); return
                }
                guard let included = read(name) else {
                    elements.append((.broken(place: place, problem: "includes \(name), which does not exist"), level)); return
                }
                if substack { elements.append((.substack(place: place), level)) }
                append(file: name, text: included, level: substack ? level + 1 : level, depth: depth + 1, read: read)
            }
            if first.lowercased() == "@include" { nested(fields.count > 1 ? fields[1] : nil, substack: false); continue }
            let type = first.hasPrefix("-") ? String(first.dropFirst()).lowercased() : first.lowercased()
            guard type == "auth", fields.count >= 2 else { continue }
            switch fields[1].lowercased() {
            case "include": nested(fields.count > 2 ? fields[2] : nil, substack: false)
            case "substack": nested(fields.count > 2 ? fields[2] : nil, substack: true)
            default:
                guard let control = PAMControl(fields[1]), fields.count >= 3 else {
                    elements.append((.broken(place: place, problem: "cannot be read (control `\(fields[1])`)"), level)); continue
                }
                elements.append((.module(PAMModuleLine(place: place, control: control, module: fields[2],
                                                       arguments: Array(fields.dropFirst(3)))), level))
            }
        }
    }

    /// The file's lines without comments, a line ending in `\` joined to the next, numbered by
    /// the line each starts on.
    static func logicalLines(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var pending = "", start = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if pending.isEmpty { start = index + 1 }
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            pending += line
            let uncommented = String(pending.prefix { $0 != "#" })
            pending = ""
            if uncommented.contains(where: { $0 != " " && $0 != "\t" }) { result.append((start, uncommented)) }
        }
        return result
    }

    /// A line's fields, a bracketed control (which may hold spaces) as one field.
    static func fields(_ line: String) -> [String] {
        var fields: [String] = []
        var rest = Substring(line)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard !rest.isEmpty else { break }
            if rest.first == "[", let close = rest.firstIndex(of: "]") {
                fields.append(String(rest[...close]))
                rest = rest[rest.index(after: close)...]
            } else {
                let field = rest.prefix { $0 != " " && $0 != "\t" }
                fields.append(String(field))
                rest = rest.dropFirst(field.count)
            }
        }
        return fields
    }
}
