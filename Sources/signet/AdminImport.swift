import Foundation
import SignetAPI
import SignetAuth
import SignetCrypto
import SignetServer
import SignetWebAuthn

/// `signet admin users import FILE`: the accounts of another service's user export (Auth0's bulk
/// export: one JSON object a line, or one JSON array), each made as `users add` makes one, in a
/// transaction of its own, so a run stopped half-way is simply run again: addresses already here
/// are passed over. `app_metadata` and `user_metadata` come along. From another Signet's export
/// (`users export --all`) the account keeps its ID, user handle and device keys, its roles where
/// one of the same name is here, and its passkeys where the RP ID is this deployment's; from
/// another service's, passkeys cannot move (they hold no passkey public keys), and each owner
/// signs in with an email code and adds one. Recovery codes never move; the import counts them.
extension Admin {
    /// What became of one record of the file.
    struct ImportOutcome: Encodable {
        /// The record's line in the file (its position, from 1, in a JSON array).
        let line: Int
        /// `made`, `exists` (the address has an account here) or `refused`.
        let outcome: String
        /// The record's `user_id` in the other service, so an app can map its old subjects to new ones.
        let source_user_id: String?
        let email: String?
        /// The account's ID here, for `made`.
        let user_id: String?
        /// How many passkeys and device keys came with it, for `made`.
        let passkeys: Int?
        let device_keys: Int?
        /// The roles it was given, by name, for `made`.
        let roles: [String]?
        let detail: String?
    }

    /// The file's largest size: an export of a few hundred thousand accounts.
    static let maxImportBytes = 256 << 20

    func importUsers() throws {
        guard options.positional.count == 3 else { throw AuthError.malformed("give one FILE") }
        let path = options.positional[2]
        guard let data = try? BoundedFile.read(path, limit: Self.maxImportBytes) else {
            throw AuthError.malformed("cannot read \(path), or it is larger than \(BoundedFile.describe(Self.maxImportBytes))")
        }
        var outcomes: [ImportOutcome] = []
        for (line, record) in try Self.exportRecords(data) {
            outcomes.append(importRecord(line: line, record))
        }
        if options.json {
            try emit(outcomes)
        } else {
            let notable = outcomes.filter { $0.outcome != "made" || $0.detail != nil }
            if !notable.isEmpty {
                print(Self.table(["LINE", "OUTCOME", "EMAIL", "DETAIL"], notable.map { [String($0.line), $0.outcome, $0.email ?? "-", $0.detail ?? "-"] }))
            }
            let counts = ["made", "exists", "refused"].map { kind in "\(outcomes.count(where: { $0.outcome == kind })) \(kind)" }
            let kept = outcomes.count(where: { $0.user_id != nil && $0.user_id == $0.source_user_id })
            let (passkeys, deviceKeys) = (outcomes.reduce(0) { $0 + ($1.passkeys ?? 0) }, outcomes.reduce(0) { $0 + ($1.device_keys ?? 0) })
            let roles = outcomes.reduce(0) { $0 + ($1.roles?.count ?? 0) }
            let carried = kept + passkeys + deviceKeys + roles == 0 ? ""
                : "; \(kept) kept their ID, \(passkeys) passkey(s), \(deviceKeys) device key(s) and \(roles) role membership(s) came with them"
            print("\(outcomes.count) record(s): " + counts.joined(separator: ", ") + carried + (options.mail ? "; each made account's address told" : "; nothing mailed"))
        }
        let refused = outcomes.count(where: { $0.outcome == "refused" })
        if refused > 0 { throw AuthError.malformed("\(refused) record(s) refused; the others were imported") }
    }

    /// The file's records with their line numbers: JSON lines (blank lines passed over), or one
    /// JSON array. A line that is not JSON is a record of its own, refused when it is read.
    static func exportRecords(_ bytes: [UInt8]) throws -> [(Int, JSONValue?)] {
        if bytes.first(where: { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }) == UInt8(ascii: "[") {
            guard let list = (try? StrictJSON(maxDepth: 32, maxLength: maxImportBytes).parse(bytes))?.array else {
                throw AuthError.malformed("the file starts as a JSON array but is not one")
            }
            return list.enumerated().map { ($0.offset + 1, $0.element) }
        }
        return bytes.split(separator: 0x0a, omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            let trimmed = line.drop { [0x20, 0x09, 0x0d].contains($0) }
            guard !trimmed.isEmpty, !trimmed.allSatisfy({ [0x20, 0x09, 0x0d].contains($0) }) else { return nil }
            return (number + 1, try? StrictJSON(maxDepth: 32, maxLength: 1 << 20).parse(Array(line)))
        }
    }

    func importRecord(line: Int, _ record: JSONValue?) -> ImportOutcome {
        func outcome(_ kind: String, made: ImportedAccount? = nil, _ detail: String? = nil) -> ImportOutcome {
            ImportOutcome(line: line, outcome: kind, source_user_id: record?["user_id"]?.string, email: record?["email"]?.string, user_id: made?.user.user_id,
                          passkeys: made?.passkeys, device_keys: made?.deviceKeys, roles: made?.roles, detail: detail)
        }
        guard let record, record.object != nil else { return outcome("refused", "not a JSON object") }
        guard let email = record["email"]?.string else { return outcome("refused", "no email") }
        let blocked = record["blocked"] == .bool(true)
        var createdAt: Int64?
        if let text = record["created_at"]?.string {
            guard let millis = Ceremonies.millis(iso: text) else { return outcome("refused", "created_at is not an ISO 8601 time") }
            createdAt = millis
        }
        let app: JSONDocument?, own: JSONDocument?, identity: ExportedIdentity
        do {
            (app, own) = (try JSONDocument.metadata(record, "app_metadata"), try JSONDocument.metadata(record, "user_metadata"))
            identity = try ExportedIdentity(record: record)
        } catch {
            return outcome("refused", AuthError(error).detail)
        }
        let new = ManagementNewUser(email: email, name: record["name"]?.string, email_verified: record["email_verified"]?.bool,
                                    verify_email: options.mail, locale: record["locale"]?.string, app_metadata: app, user_metadata: own)
        do {
            let made = try ceremonies.importUser(new, createdAt: createdAt, blocked: blocked, carrying: identity, by: .commandLine, context: context)
            let notes = (blocked ? ["blocked, as in the export"] : []) + made.notes
            return outcome("made", made: made, notes.isEmpty ? nil : notes.joined(separator: "; "))
        } catch {
            let failure = AuthError(error)
            if failure.reason == .userExists { return outcome("exists", "an account with this address is here already") }
            return outcome("refused", failure.publicDetail ?? failure.detail)
        }
    }
}
