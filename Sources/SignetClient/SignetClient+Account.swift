import Foundation

extension SignetClient {
    /// Erases the signed-in account (`DELETE /me`, a sensitive change: steps up with a passkey
    /// when the sign-in is old), then forgets the session and this device's key. Apps that let
    /// people create an account must let them delete it from inside the app (App Store Review
    /// Guidelines 5.1.1(v)); this is that button's call.
    public func deleteAccount() async throws {
        let answer = try await authorized("DELETE", "me")
        guard answer.status == 204 else { throw Self.error(answer) }
        audienceTokens = [:]
        try tokens.clear()
        // The server has forgotten the key; the device's copy names nothing now.
        try? await deviceKeys?.deleteKey()
    }
}
