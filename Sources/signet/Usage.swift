import Foundation

/// A command's usage: on standard error with status 2 after a wrong command line, or on standard
/// output with status 0 when it was asked for (``helpAsked``).
func usageError(_ message: String) -> Int32 {
    guard !helpAsked else {
        print(message)
        return 0
    }
    FileHandle.standardError.write(Data((message + "\n").utf8))
    return 2
}

/// `signet COMMAND --help` (or `-h` anywhere after the command, or `signet COMMAND help`): the
/// command is given `--help` alone, which no command takes, so it prints its usage and runs nothing.
let helpAsked = CommandLine.arguments.count > 2
    && (CommandLine.arguments.dropFirst(2).contains { $0 == "--help" || $0 == "-h" } || Array(CommandLine.arguments.dropFirst(2)) == ["help"])
