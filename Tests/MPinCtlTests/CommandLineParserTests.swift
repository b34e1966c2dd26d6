import MPinCLI
import XCTest

/// MPinCLI's command-line parser, which mpinctl and mpin use instead of swift-argument-parser
/// (docs/PERFORMANCE.md §2.6): what it accepts, what it refuses as a usage error (status 64), and
/// the help it writes from the same declarations.
final class CommandLineParserTests: XCTestCase {
    private let declaration = CommandDeclaration(
        "register", abstract: "Register an identity.",
        arguments: [.argument("user", help: "The Unix user.")],
        options: [
            .option("identity", required: true, help: "The identity."),
            .option("backend", help: "The backend URL."),
            .option("wait", default: "300", help: "Seconds to wait."),
            .flag("pin-stdin", help: "Read the PIN from standard input."),
        ])

    private func usageError(_ words: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try declaration.parse(words)
            XCTFail("accepted \(words)", file: file, line: line)
        } catch let error as UsageError {
            return error.message
        } catch {
            XCTFail("\(words): \(error)", file: file, line: line)
        }
        return ""
    }

    func testOptionsFlagsAndArgumentsInAnyOrder() throws {
        let line = try declaration.parse(["--identity", "a@example.org", "bob", "--pin-stdin", "--backend=http://127.0.0.1:1"])
        XCTAssertEqual(line.argument("user"), "bob")
        XCTAssertEqual(line.value("identity"), "a@example.org")
        XCTAssertEqual(line.value("backend"), "http://127.0.0.1:1")
        XCTAssertTrue(line.flag("pin-stdin"))
        XCTAssertEqual(try line.integer("wait"), 300, "the default")

        let plain = try declaration.parse(["bob", "--identity", "x", "--wait", "7"])
        XCTAssertNil(plain.value("backend"))
        XCTAssertFalse(plain.flag("pin-stdin"))
        XCTAssertEqual(try plain.integer("wait"), 7)
        XCTAssertEqual(try declaration.parse(["bob", "--identity="]).value("identity"), "", "an empty value given with =")
    }

    func testDoubleDashEndsTheOptions() throws {
        let line = try declaration.parse(["--identity", "x", "--", "--pin-stdin"])
        XCTAssertEqual(line.argument("user"), "--pin-stdin")
        XCTAssertFalse(line.flag("pin-stdin"))
        XCTAssertEqual(usageError(["--identity", "x", "--", "bob", "--help"]), "Unexpected argument '--help'")
    }

    func testUsageErrors() {
        XCTAssertEqual(usageError(["bob", "--identity", "x", "--bogus"]), "Unknown option '--bogus'")
        XCTAssertEqual(usageError(["bob", "--identity", "x", "-v"]), "Unknown option '-v'")
        XCTAssertEqual(usageError(["bob"]), "Missing expected argument '--identity <identity>'")
        XCTAssertEqual(usageError(["--identity", "x"]), "Missing expected argument '<user>'")
        XCTAssertEqual(usageError(["bob", "carol", "--identity", "x"]), "Unexpected argument 'carol'")
        XCTAssertEqual(usageError(["bob", "--identity"]), "Missing value for '--identity <identity>'")
        // A forgotten value does not swallow the next option.
        XCTAssertEqual(usageError(["bob", "--identity", "--pin-stdin"]), "Missing value for '--identity <identity>'")
        XCTAssertEqual(usageError(["bob", "--identity", "x", "--identity", "y"]), "The option '--identity' is given more than once")
        XCTAssertEqual(usageError(["bob", "--identity", "x", "--pin-stdin", "--pin-stdin"]), "The option '--pin-stdin' is given more than once")
        XCTAssertEqual(usageError(["bob", "--identity", "x", "--pin-stdin=yes"]),
                       "The option '--pin-stdin' does not take any value, but 'yes' was specified.")
        XCTAssertThrowsError(try declaration.parse(["bob", "--identity", "x", "--wait", "soon"]).integer("wait")) {
            XCTAssertEqual($0 as? UsageError, UsageError("The value 'soon' is invalid for '--wait <wait>'"))
        }
    }

    func testHelpAnywhereBeforeDoubleDash() {
        for words in [["--help"], ["-h"], ["bob", "-h", "--bogus"], ["--identity", "x", "--help"]] {
            XCTAssertThrowsError(try declaration.parse(words)) { XCTAssertTrue($0 is HelpRequest, "\(words): \($0)") }
        }
        let help = declaration.help(program: "tool")
        XCTAssertTrue(help.hasPrefix("OVERVIEW: Register an identity.\n\nUSAGE: tool register "), help)
        XCTAssertTrue(help.contains("[--backend <backend>]"), help)
        let usage = help.split(separator: "\n").first { $0.hasPrefix("USAGE:") }.map(String.init) ?? ""
        XCTAssertTrue(usage.contains(" --identity <identity>"), "required, so in the usage line: \(usage)")
        XCTAssertFalse(usage.contains("[--identity"), "required, so without brackets: \(usage)")
        XCTAssertTrue(help.contains("\n  <user>                  The Unix user.\n"), help)
        XCTAssertTrue(help.contains("\n  --wait <wait>           Seconds to wait. (default: 300)\n"), help)
        XCTAssertTrue(help.contains("\n  --pin-stdin             Read the PIN from standard input.\n"), help)
        XCTAssertTrue(help.hasSuffix("  -h, --help              Show help information.\n\n"), help)
        for line in help.split(separator: "\n") where !line.hasPrefix("USAGE:") {
            XCTAssertLessThan(line.count, 80, "wrapped: \(line)")
        }
    }

    // MARK: Programs of subcommands

    private struct Greet: CLICommand {
        static let declaration = CommandDeclaration("greet", abstract: "Greet someone.", arguments: [.argument("name")],
                                                    options: [.option("times", default: "1", help: "How often.")])
        let name: String, times: Int
        init(_ line: ParsedCommandLine) throws {
            name = line.argument("name")
            times = try line.integer("times")
        }
        func run() {}
    }

    private struct Quiet: CLICommand {
        static let declaration = CommandDeclaration("quiet", abstract: "Say nothing.")
        init(_ line: ParsedCommandLine) {}
        func run() {}
    }

    private let group = CommandGroup(name: "tool", abstract: "A tool.", discussion: "Exit status: 0 success, 64 usage error.",
                                     subcommands: [Greet.self, Quiet.self])

    func testSubcommandsRunWithTheirParsedValues() throws {
        guard case .run(let command) = group.request(["greet", "--times", "3", "ann"]) else { return XCTFail("not run") }
        let greet = try XCTUnwrap(command as? Greet)
        XCTAssertEqual(greet.name, "ann")
        XCTAssertEqual(greet.times, 3)
        guard case .run(let quiet) = group.request(["quiet"]) else { return XCTFail("not run") }
        XCTAssertTrue(quiet is Quiet)
    }

    func testHelpOfTheProgramAndOfEachSubcommand() {
        for words in [[], ["--help"], ["-h"], ["help"]] {
            guard case .help(let text) = group.request(words) else { XCTFail("\(words): no help"); continue }
            XCTAssertTrue(text.contains("USAGE: tool <subcommand>"), text)
            XCTAssertTrue(text.contains("\n  greet                   Greet someone.\n"), text)
            XCTAssertTrue(text.contains("Exit status: 0 success, 64 usage error."), text)
        }
        for words in [["help", "greet"], ["greet", "--help"], ["greet", "-h", "--bogus"]] {
            guard case .help(let text) = group.request(words) else { XCTFail("\(words): no help"); continue }
            XCTAssertTrue(text.hasPrefix("OVERVIEW: Greet someone.\n\nUSAGE: tool greet [--times <times>] <name>\n"), text)
        }
    }

    func testUsageErrorsNameTheCommandAndItsHelp() {
        guard case .usageError(let unknown) = group.request(["wave"]) else { return XCTFail("accepted wave") }
        XCTAssertEqual(unknown, "Error: Unexpected argument 'wave'\nUsage: tool <subcommand>\n  See 'tool --help' for more information.\n")
        guard case .usageError(let option) = group.request(["--verbose", "greet"]) else { return XCTFail("accepted --verbose") }
        XCTAssertTrue(option.hasPrefix("Error: Unknown option '--verbose'\n"), option)
        guard case .usageError(let helpOfNothing) = group.request(["help", "wave"]) else { return XCTFail("help wave") }
        XCTAssertTrue(helpOfNothing.hasPrefix("Error: Unexpected argument 'wave'\n"), helpOfNothing)
        guard case .usageError(let missing) = group.request(["greet"]) else { return XCTFail("greet without a name") }
        XCTAssertEqual(missing, "Error: Missing expected argument '<name>'\nUsage: tool greet [--times <times>] <name>\n"
                       + "  See 'tool greet --help' for more information.\n")
        // A value of the wrong form, found when the command reads it, is a usage error too.
        guard case .usageError(let number) = group.request(["greet", "ann", "--times", "many"]) else { return XCTFail("times many") }
        XCTAssertTrue(number.hasPrefix("Error: The value 'many' is invalid for '--times <times>'\n"), number)
    }
}
