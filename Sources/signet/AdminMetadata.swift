import Foundation
import SignetAPI
import SignetAuth
import SignetServer
import SignetWebAuthn

/// `signet admin users update ID --app-metadata JSON --user-metadata JSON`: what `PATCH
/// /api/v2/users/{id}` does with Auth0's metadata, merged at the top level.
extension Admin {
    func updateMetadata(_ id: String) throws {
        func document(_ option: String) throws -> JSONDocument? {
            guard let text = options.one(option) else { return nil }
            guard let parsed = try? StrictJSON(maxDepth: 32, maxLength: Ceremonies.metadataLimit * 2).parse(Array(text.utf8)), parsed.object != nil else {
                throw AuthError.malformed("\(option) must be a JSON object, such as '{\"plan\": \"pro\"}'")
            }
            return JSONDocument(parsed)
        }
        let patch = ManagementUserPatch(app_metadata: try document("--app-metadata"), user_metadata: try document("--user-metadata"))
        guard patch.app_metadata != nil || patch.user_metadata != nil else { throw AuthError.malformed("give --app-metadata JSON or --user-metadata JSON") }
        let user = try ceremonies.updateUser(id: id, patch, by: .commandLine, context: context)
        if options.json { return try emit(user) }
        printMetadata(user)
    }

    /// The user's two metadata objects, a line each (`none` for one not set).
    func printMetadata(_ user: ManagementUser) {
        for (label, value) in [("app_metadata ", user.app_metadata), ("user_metadata", user.user_metadata)] {
            print("\(label) " + (value.flatMap { try? Self.compact.encode($0) }.map { Self.printable(String(decoding: $0, as: UTF8.self)) } ?? "none"))
        }
    }
}
