#if canImport(Glibc)
import Glibc
#endif
import MPinPOSIX

/// What a program's command line asks for: a subcommand to run, or help to print.
package enum CommandLineRequest {
    case run(any CLICommand)
    /// Help asked for (`--help`, `help [SUBCOMMAND]`, or nothing at all): printed on stdout, status 0.
    case help(String)
    /// A usage error, with the usage to print under it: on stderr, status 64.
    case usageError(String)
}

extension CommandGroup {
    /// Reads the words after the program's name: `SUBCOMMAND [OPTIONS] [ARGUMENTS]`, `help [SUBCOMMAND]`,
    /// `-h`/`--help`, or nothing (the program's help).
    package func request(_ words: [String]) -> CommandLineRequest {
        guard let first = words.first, first != "-h", first != "--help" else { return .help(help) }
        if first == "help" {
            guard words.count > 1 else { return .help(help) }
            guard let command = subcommand(words[1]) else { return .usageError(rootUsageError("Unexpected argument '\(words[1])'")) }
            guard words.count == 2 else { return .usageError(rootUsageError("Unexpected argument '\(words[2])'")) }
            return .help(command.declaration.help(program: name))
        }
        guard let command = subcommand(first) else {
            return .usageError(rootUsageError(first.hasPrefix("-") ? "Unknown option '\(first)'" : "Unexpected argument '\(first)'"))
        }
        let declaration = command.declaration
        do {
            return .run(try command.init(try declaration.parse(Array(words.dropFirst()))))
        } catch is HelpRequest {
            return .help(declaration.help(program: name))
        } catch let error as UsageError {
            return .usageError("Error: \(error.message)\nUsage: \(declaration.usage(program: name))\n"
                               + "  See '\(name) \(declaration.name) --help' for more information.\n")
        } catch {
            return .usageError("Error: \(error)\n")
        }
    }

    /// Parses `words` and either prints help (status 0) or a usage error (status 64), or returns
    /// the subcommand to run.
    package func parseOrExit(_ words: [String]) -> any CLICommand {
        switch request(words) {
        case .run(let command): return command
        case .help(let text): writeAll(STDOUT_FILENO, text); exit(0)
        case .usageError(let text): writeAll(STDERR_FILENO, text); exit(ExitStatus.usage.rawValue)
        }
    }

    private func subcommand(_ name: String) -> (any CLICommand.Type)? {
        subcommands.first { $0.declaration.name == name }
    }

    private func rootUsageError(_ message: String) -> String {
        "Error: \(message)\nUsage: \(name) <subcommand>\n  See '\(name) --help' for more information.\n"
    }
}

/// Writes all of `text` to `fd`; an error (a closed pipe) leaves nothing else to do.
private func writeAll(_ fd: Int32, _ text: String) {
    try? MPinPOSIX.writeAll(fd, Array(text.utf8))
}
