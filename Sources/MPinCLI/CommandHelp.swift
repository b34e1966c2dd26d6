// The help and usage texts, written from the declarations in nearly the layout
// swift-argument-parser printed before (docs/PERFORMANCE.md §2.6; a usage line now lists the
// options before the positional arguments). Scripts and tests match `USAGE: mpinctl <subcommand>`.

/// Column at which the descriptions of options, arguments and subcommands start.
private let descriptionColumn = 26
/// Lines stay shorter than 80 columns.
private let lineWidth = 79

/// `text` wrapped at word boundaries into lines of at most `width` characters.
func wrapped(_ text: String, width: Int) -> [String] {
    var lines: [String] = [], line = ""
    for word in text.split(separator: " ") {
        if !line.isEmpty, line.count + 1 + word.count > width { lines.append(line); line = "" }
        line += line.isEmpty ? String(word) : " " + word
    }
    if !line.isEmpty { lines.append(line) }
    return lines
}

/// One entry of a list (`  --wait <wait>           Seconds to ...`): the description beside the
/// name when the name leaves room, else on the lines below it.
private func entry(_ name: String, _ description: String) -> String {
    let indent = String(repeating: " ", count: descriptionColumn)
    let lines = wrapped(description, width: lineWidth - descriptionColumn)
    var out = "  " + name
    if lines.isEmpty { return out + "\n" }
    if out.count < descriptionColumn {
        out += String(repeating: " ", count: descriptionColumn - out.count) + lines[0] + "\n"
        for line in lines.dropFirst() { out += indent + line + "\n" }
    } else {
        out += "\n"
        for line in lines { out += indent + line + "\n" }
    }
    return out
}

extension CommandDeclaration {
    /// `mpinctl register [--config <config>] ... <user> --identity <identity> ...`
    package func usage(program: String) -> String {
        var words = ["\(program) \(name)"]
        for option in options {
            switch option.kind {
            case .flag: words.append("[--\(option.name)]")
            case .value(let required, _): words.append(required ? "--\(option.name) <\(option.name)>" : "[--\(option.name) <\(option.name)>]")
            }
        }
        words += arguments.map { "<\($0.name)>" }
        return words.joined(separator: " ")
    }

    /// What `PROGRAM NAME --help` prints.
    package func help(program: String) -> String {
        var out = "OVERVIEW: " + wrapped(abstract, width: lineWidth - 10).joined(separator: "\n") + "\n\n"
        out += "USAGE: \(usage(program: program))\n\n"
        if !arguments.isEmpty {
            out += "ARGUMENTS:\n" + arguments.map { entry("<\($0.name)>", $0.help) }.joined() + "\n"
        }
        out += "OPTIONS:\n"
        for option in options {
            switch option.kind {
            case .flag:
                out += entry("--\(option.name)", option.help)
            case .value(_, let defaultValue):
                out += entry("--\(option.name) <\(option.name)>", option.help + (defaultValue.map { " (default: \($0))" } ?? ""))
            }
        }
        return out + entry("-h, --help", "Show help information.") + "\n"
    }
}

extension CommandGroup {
    /// What `PROGRAM`, `PROGRAM --help` and `PROGRAM help` print.
    package var help: String {
        var out = "OVERVIEW: \(abstract)\n\n" + wrapped(discussion, width: lineWidth).joined(separator: "\n") + "\n\n"
        out += "USAGE: \(name) <subcommand>\n\nOPTIONS:\n" + entry("-h, --help", "Show help information.") + "\nSUBCOMMANDS:\n"
        for command in subcommands { out += entry(command.declaration.name, command.declaration.abstract) }
        return out + "\n  See '\(name) help <subcommand>' for detailed help.\n"
    }
}
