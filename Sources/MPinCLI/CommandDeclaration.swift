// The command line of `mpinctl` and `mpin`, declared once: the parser reads it and the help text
// is written from it. Own code instead of swift-argument-parser (docs/PERFORMANCE.md §2.6): that
// package imports FoundationEssentials, which with the regex module it brings costs these programs
// about 7 MB of the 15,000 KB the libpam-mpin package may install. Tests/Man/check-man.sh reads the
// declarations (`.option("NAME"`, `.flag("NAME"`) to check that man/ documents every option.

/// An option (`--name VALUE` or `--name=VALUE`) or a flag (`--name`) of a command.
package struct OptionDeclaration: Sendable {
    package enum Kind: Sendable {
        /// Takes a value; `required` ones must be given, others fall back to `defaultValue` (or none).
        case value(required: Bool, defaultValue: String?)
        case flag
    }

    /// The name without its dashes, as typed: `activation-code`.
    package let name: String
    package let kind: Kind
    package let help: String

    /// An option that takes a value: required, or with a default (shown in the help), or neither.
    package static func option(_ name: String, required: Bool = false, default defaultValue: String? = nil, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, kind: .value(required: required, defaultValue: defaultValue), help: help)
    }

    /// An option without a value: present or not.
    package static func flag(_ name: String, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, kind: .flag, help: help)
    }

    var takesValue: Bool { if case .flag = kind { return false } else { return true } }
}

/// A positional argument of a command; every one is required.
package struct ArgumentDeclaration: Sendable {
    /// The name shown in the help, without its angle brackets: `user`.
    package let name: String
    package let help: String

    package static func argument(_ name: String, help: String = "") -> ArgumentDeclaration {
        ArgumentDeclaration(name: name, help: help)
    }
}

/// What one subcommand accepts and says about itself.
package struct CommandDeclaration: Sendable {
    package let name: String
    package let abstract: String
    package let arguments: [ArgumentDeclaration]
    package let options: [OptionDeclaration]

    package init(_ name: String, abstract: String, arguments: [ArgumentDeclaration] = [], options: [OptionDeclaration] = []) {
        self.name = name
        self.abstract = abstract
        self.arguments = arguments
        self.options = options
    }

    func option(named name: String) -> OptionDeclaration? { options.first { $0.name == name } }
}

/// A subcommand: its declaration, how it takes its parsed command line, and what it does.
package protocol CLICommand {
    static var declaration: CommandDeclaration { get }
    /// Reads the values out of a command line already checked against `declaration`; throws
    /// `UsageError` for a value of the wrong form (a number that is not one).
    init(_ line: ParsedCommandLine) throws
    func run() throws
}

/// A program made of subcommands (`mpinctl`, `mpin`): its name, its overview and its commands.
package struct CommandGroup {
    package let name: String
    package let abstract: String
    package let discussion: String
    package let subcommands: [any CLICommand.Type]

    package init(name: String, abstract: String, discussion: String, subcommands: [any CLICommand.Type]) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.subcommands = subcommands
    }
}
