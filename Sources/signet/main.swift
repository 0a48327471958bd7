import Foundation

// signet: the command-line entry point. Each subcommand lives in its own file.
let arguments = helpAsked ? [CommandLine.arguments[1], "--help"] : Array(CommandLine.arguments.dropFirst())
ResourceLimits.raiseOpenFiles()
let usage = """
    usage: signet <command> [options]

    commands:
      serve [--config signet.json] [--listen HOST:PORT] [--database sqlite:PATH]
                     run the server (with no configuration: development mode on 127.0.0.1:8080)
      origin FINGERPRINT
                     print the android:apk-key-hash: origin for a SHA-256 certificate fingerprint
      keys rotate [--config signet.json] [--database sqlite:PATH]
                     add a token-signing key; the old one stays published until its tokens expire
      keys kek       print a new key-encryption key for SIGNET_KEK
      keys rekey --new-kek-file PATH [--config signet.json] [--database sqlite:PATH]
                     seal the database's keys and mail under a new key-encryption key (servers stopped)
      keys status [--config signet.json] [--database sqlite:PATH]
                     the key-encryption key's ID, and the unused recovery codes each code key still serves
      keys revoke KID [--config signet.json] [--database sqlite:PATH]
                     delete a token-signing key now (one that may be in other hands): its tokens stop verifying
      client-secret  print a new confidential client's secret, and the client_secret_hash line for signet.json
      client-key new|assertion ...
                     a machine client's key pair for private_key_jwt, and the assertions it sends instead of a secret
      admin users|clients|roles|log-streams|stats|logs ...
                     accounts, clients, roles, audit log streams, activity and the audit log (signet admin for details)
      backup --to FILE [--seal] [--config signet.json] [--database sqlite:PATH]
                     a checked copy of a running SQLite database, sealed under the key-encryption key with --seal (PostgreSQL: pg_dump)
      unseal COPY --to FILE [--config signet.json]
                     a sealed copy opened into a plain SQLite file, with the configured key-encryption key
      restore --from FILE|DIR [--check] [--config signet.json] [--database sqlite:PATH]
                     put a backup back in the SQLite database's place, servers stopped; the one replaced is kept
                     (--check: every check, nothing changed)
      copy --to sqlite:PATH|postgres://... [--config signet.json] [--database URL]
                     every row into a new, empty database of either kind (SQLite to PostgreSQL), read back and checked
      doctor --config signet.json [--resolve HOST:PORT:ADDR] [--ca-file PEM] [--json] [--offline]
                     check a live deployment's association files, TLS, discovery and origins, with the fix for each failure
      authenticator signup|signin|passkeys|enroll-device-key|approve|step-up|token|device-signin|approve-device|... --state FILE [--url URL] [--dpop]
                     play the phone: a software authenticator and device key driven through the SDK
      verify registration|authentication FILE.json [--anchors PEM] [--now ISO8601]
                     verify one WebAuthn response and print the result as JSON
      bench verify [--json] [--rounds N]
                     measure assertion and registration verification against raw OpenSSL
      bench login|disk|cpu|soak ...
                     sign-ins over HTTP, this disk's syncs, how steadily the processors run, a long mixed run (signet bench for details)
      help           show this text (COMMAND --help: that command's)

    """

switch arguments.first {
case "serve":
    exit(ServeCommand.run(Array(arguments.dropFirst())))
case "origin":
    exit(OriginCommand.run(Array(arguments.dropFirst())))
case "keys":
    exit(KeysCommand.run(Array(arguments.dropFirst())))
case "admin":
    exit(AdminCommand.run(Array(arguments.dropFirst())))
case "doctor":
    exit(DoctorCommand.run(Array(arguments.dropFirst())))
case "backup":
    exit(BackupCommand.run(Array(arguments.dropFirst())))
case "restore":
    exit(RestoreCommand.run(Array(arguments.dropFirst())))
case "unseal":
    exit(UnsealCommand.run(Array(arguments.dropFirst())))
case "copy":
    exit(CopyCommand.run(Array(arguments.dropFirst())))
case "client-secret":
    exit(ClientSecretCommand.run(Array(arguments.dropFirst())))
case "client-key":
    exit(ClientKeyCommand.run(Array(arguments.dropFirst())))
case "authenticator":
    exit(AuthenticatorCommand.run(Array(arguments.dropFirst())))
case "verify":
    exit(VerifyCommand.run(Array(arguments.dropFirst())))
case "bench":
    exit(BenchCommand.run(Array(arguments.dropFirst())))
case "help", "--help", "-h":
    print(usage, terminator: "")
    exit(0)
default:
    let problem = arguments.first.map { "signet: no command \"\($0)\"\n" } ?? ""
    FileHandle.standardError.write(Data((problem + usage).utf8))
    exit(2)
}
