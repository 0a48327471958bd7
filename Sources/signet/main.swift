import Foundation

// signet: the command-line entry point. Each subcommand lives in its own file.
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: signet <command> [options]

    commands:
      verify registration|authentication FILE.json [--anchors PEM] [--now ISO8601]
                     verify one WebAuthn response and print the result as JSON
      bench verify [--json] [--seconds S]
                     measure assertion and registration verification against raw OpenSSL
      help           show this text

    """

switch arguments.first {
case "verify":
    exit(VerifyCommand.run(Array(arguments.dropFirst())))
case "bench":
    exit(BenchCommand.run(Array(arguments.dropFirst())))
case "help", "--help", "-h":
    print(usage, terminator: "")
    exit(0)
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
