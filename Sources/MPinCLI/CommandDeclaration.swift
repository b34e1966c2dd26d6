// The command line of `mpinctl` and `mpin`, declared once: the parser reads it and the help text
// is written from it. Own code instead of swift-argument-parser (issue 30): that package imports
// FoundationEssentials, which with the regex module it brings costs these programs about 7 MB of
// the 15,000 KB the libpam-mpin package may install. Tests/Man/check-man.sh reads the
// declarations (`.option("NAME"`, `.flag("NAME"`) to check that man/ documents every option.

/// An option (`--name VALUE` or `--name=VALUE`) or a flag (`--name`) of a command.
public struct OptionDeclaration: Sendable {
    public enum Kind: Sendable {
        /// Takes a value; `required` ones must be given, others fall back to `defaultValue` (or none).
        case value(required: Bool, defaultValue: String?)
        case flag
    }

    /// The name without its dashes, as typed: `activation-code`.
    public let name: String
    public let kind: Kind
    public let help: String

    /// An option that takes a value: required, or with a default (shown in the help), or neither.
    public static func option(_ name: String, required: Bool = false, default defaultValue: String? = nil, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, kind: .value(required: required, defaultValue: defaultValue), help: help)
    }

    /// An option without a value: present or not.
    public static func flag(_ name: String, help: String) -> OptionDeclaration {
        OptionDeclaration(name: name, kind: .flag, help: help)
    }

    var takesValue: Bool { if case .flag = kind { return false } else { return true } }
}

/// A positional argument of a command; every one is required.
public struct ArgumentDeclaration: Sendable {
    /// The name shown in the help, without its angle brackets: `user`.
    public let name: String
    public let help: String

    public static func argument(_ name: String, help: String = "") -> ArgumentDeclaration {
        ArgumentDeclaration(name: name, help: help)
    }
}

/// What one subcommand accepts and says about itself.
public struct CommandDeclaration: Sendable {
    public let name: String
    public let abstract: String
    public let arguments: [ArgumentDeclaration]
    public let options: [OptionDeclaration]

    public init(_ name: String, abstract: String, arguments: [ArgumentDeclaration] = [], options: [OptionDeclaration] = []) {
        self.name = name
        self.abstract = abstract
        self.arguments = arguments
        self.options = options
    }

    func option(named name: String) -> OptionDeclaration? { options.first { $0.name == name } }
}

/// A subcommand: its declaration, how it takes its parsed command line, and what it does.
public protocol CLICommand {
    static var declaration: CommandDeclaration { get }
    /// Reads the values out of a command line already checked against `declaration`; throws
    /// `UsageError` for a value of the wrong form (a number that is not one).
    init(_ line: ParsedCommandLine) throws
    func run() throws
}

/// A program made of subcommands (`mpinctl`, `mpin`): its name, its overview and its commands.
public struct CommandGroup {
    public let name: String
    public let abstract: String
    public let discussion: String
    public let subcommands: [any CLICommand.Type]

    public init(name: String, abstract: String, discussion: String, subcommands: [any CLICommand.Type]) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.subcommands = subcommands
    }
}
