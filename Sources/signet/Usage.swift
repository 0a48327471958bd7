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

/// What is wrong with a command line: said on the line before the usage, so an operator sees which
/// word to mend instead of the whole usage alone.
struct UsageProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// A word the command does not take.
    static func unexpected(_ word: String) -> UsageProblem {
        UsageProblem(word.hasPrefix("-") ? "unknown option \(word)" : "unexpected \"\(word)\"")
    }

    /// A required option left out.
    static func missing(_ option: String) -> UsageProblem { UsageProblem("\(option) is required") }
}

/// `value`, or `problem` when the command line did not give it (a required option).
func required<Value>(_ value: Value?, else problem: UsageProblem) throws(UsageProblem) -> Value {
    guard let value else { throw problem }
    return value
}

/// A command's words, read in order. An option's value is the word after it and must be there: a
/// missing one is a problem, never the default, so `signet serve --config $UNSET` does not start in
/// development mode and `--database $UNSET` does not open the current directory's database.
struct CommandWords {
    private var words: IndexingIterator<[String]>

    init(_ words: some Sequence<String>) { self.words = Array(words).makeIterator() }

    mutating func next() -> String? { words.next() }

    /// The word after `option`. Another option (`--…`) in its place means the value was left out.
    mutating func value(of option: String) throws(UsageProblem) -> String {
        guard let value = words.next() else { throw UsageProblem("\(option) needs a value") }
        guard !value.hasPrefix("--") else { throw UsageProblem("\(option) needs a value, not the option \(value)") }
        return value
    }

    /// The number after `option`.
    mutating func number<Number: LosslessStringConvertible>(of option: String, as _: Number.Type = Number.self) throws(UsageProblem) -> Number {
        let word = try value(of: option)
        guard let number = Number(word) else { throw UsageProblem("\(option) needs a number, not \"\(word)\"") }
        return number
    }
}

/// The usage after what was wrong (``UsageProblem``, or any error's words), with status 2; with
/// `--help`, which every command refuses as an unknown option, the usage alone on standard output.
func usageError(_ usage: String, _ problem: any Error) -> Int32 {
    guard !helpAsked else { return usageError(usage) }
    let command = CommandLine.arguments.dropFirst().first.map { "signet \($0)" } ?? "signet"
    return usageError("\(command): \(problem)\n\(usage)")
}
