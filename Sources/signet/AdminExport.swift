import Foundation
import SignetAPI
import SignetAuth

/// `signet admin users export --all [--out FILE]`: every account's record as JSON lines, in the
/// shape of Auth0's bulk user export, which `users import` reads: a deployment's accounts moved
/// to another, or kept apart from the database. The file holds addresses, so `--out` makes it
/// readable by its owner only, and never overwrites one.
extension Admin {
    func exportAll() throws {
        guard options.positional.count == 2 else { throw AuthError.malformed("export --all takes no ID") }
        let path = options.one("--out")
        let handle: FileHandle
        if let path {
            guard !FileManager.default.fileExists(atPath: path) else { throw AuthError.malformed("\(path) exists; give a new file name") }
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                  let file = FileHandle(forWritingAtPath: path) else { throw AuthError.malformed("cannot create \(path)") }
            handle = file
        } else {
            handle = FileHandle.standardOutput
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var buffer = Data()
        let count = try ceremonies.exportAllUsers(by: .commandLine, context: context) { line in
            buffer.append(try encoder.encode(line))
            buffer.append(0x0A)
            if buffer.count >= 1 << 20 {
                handle.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(buffer)
        if let path {
            try handle.synchronize()
            try handle.close()
            print("exported \(count) account(s) to \(path) (readable by you only: it holds their addresses); signet admin users import \(path) reads it")
        } else {
            FileHandle.standardError.write(Data("exported \(count) account(s)\n".utf8))
        }
        // The import takes the passkeys only for this RP ID: a run without the deployment's
        // configuration records the development one.
        let rpID = ceremonies.configuration.rpID
        FileHandle.standardError.write(Data(("their passkeys are recorded for RP ID \(rpID) (relying_party.id): an import takes them only where the RP ID is the same"
            + (rpID == "localhost" ? "; for a deployment's own, run this with its --config" : "") + "\n").utf8))
    }
}
