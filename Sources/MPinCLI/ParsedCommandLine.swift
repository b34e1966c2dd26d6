/// A command line wrong in form: an unknown option or subcommand, a missing value or argument,
/// an option given twice, a value that is not a number. The program prints it with the
/// command's usage and exits with 64 (EX_USAGE), as mpinctl(8) says.
package struct UsageError: Error, Equatable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
    package init(_ message: String) { self.message = message }
}

/// One subcommand's command line, checked against its declaration: every option known, every
/// required one and every argument present, none given twice.
package struct ParsedCommandLine {
    let declaration: CommandDeclaration
    let values: [String: String]
    let flags: Set<String>
    let positional: [String]

    /// The option's value as given, else its default, else nil.
    package func value(_ name: String) -> String? {
        if let given = values[name] { return given }
        guard case .value(_, let defaultValue)? = declaration.option(named: name)?.kind else { return nil }
        return defaultValue
    }

    /// A required option's value (the parser has checked that it is there) or one with a default.
    package func requiredValue(_ name: String) -> String { value(name) ?? "" }

    /// The option's value as a whole number (given or default), or a usage error naming it.
    package func integer(_ name: String) throws -> Int {
        let text = requiredValue(name)
        guard let number = Int(text) else { throw UsageError("The value '\(text)' is invalid for '--\(name) <\(name)>'") }
        return number
    }

    package func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The positional argument declared as `name`.
    package func argument(_ name: String) -> String {
        guard let index = declaration.arguments.firstIndex(where: { $0.name == name }), index < positional.count else { return "" }
        return positional[index]
    }
}

extension CommandDeclaration {
    /// Parses the words after the subcommand's name. Options and arguments may come in any
    /// order; `--` ends the options (what follows is positional even if it starts with `-`).
    /// A value starting with `-` must be given as `--name=VALUE`, so that a forgotten value
    /// does not swallow the next option. Throws `HelpRequest` for `-h`/`--help` before `--`.
    package func parse(_ words: [String]) throws -> ParsedCommandLine {
        var values: [String: String] = [:], flags: Set<String> = [], positional: [String] = []
        var index = 0, optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") { positional.append(word); continue }
            if word == "--" { optionsEnded = true; continue }
            if word == "-h" || word == "--help" { throw HelpRequest() }
            guard word.hasPrefix("--") else { throw UsageError("Unknown option '\(word)'") }
            let body = word.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline: String? = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            guard let option = self.option(named: name) else { throw UsageError("Unknown option '--\(name)'") }
            guard values[name] == nil, !flags.contains(name) else { throw UsageError("The option '--\(name)' is given more than once") }
            if !option.takesValue {
                if let inline { throw UsageError("The option '--\(name)' does not take any value, but '\(inline)' was specified.") }
                flags.insert(name)
                continue
            }
            if let inline { values[name] = inline; continue }
            guard index < words.count, !(words[index].hasPrefix("-") && words[index] != "-") else {
                throw UsageError("Missing value for '--\(name) <\(name)>'")
            }
            values[name] = words[index]
            index += 1
        }
        for option in options {
            if case .value(true, _) = option.kind, values[option.name] == nil {
                throw UsageError("Missing expected argument '--\(option.name) <\(option.name)>'")
            }
        }
        if positional.count < arguments.count {
            throw UsageError("Missing expected argument '<\(arguments[positional.count].name)>'")
        }
        if positional.count > arguments.count {
            throw UsageError("Unexpected argument '\(positional[arguments.count])'")
        }
        return ParsedCommandLine(declaration: self, values: values, flags: flags, positional: positional)
    }
}

/// `-h` or `--help` among a command's options: its help is printed instead of running it.
package struct HelpRequest: Error, Equatable {}
