public import SignetAPI

/// Sign-in from the keyboard's passkey suggestions.
extension SignetClient {
    /// A sign-in from the keyboard's passkey suggestions (AutoFill-assisted requests, iOS 16 and
    /// macOS 13; conditional mediation, WebAuthn L3 §5.1.4): start it as the sign-in screen
    /// appears, which has a text field whose `textContentType` is `.username`; it returns, signed
    /// in, when the user picks a passkey there. The challenge is renewed at half the server's
    /// auth session life (the options' `timeout`), so the suggestions stay good while the screen
    /// is up. `nil` when the provider offers no AutoFill, or when the request ends without a
    /// pick: the task was cancelled (as the screen goes away), or a modal ``signIn(username:)``
    /// took its place.
    public func signInWithAutoFill() async throws -> TokenResponse? {
        do {
            return try await autoFillSignIn()
        } catch where Task.isCancelled {
            // Whatever a call cut short by the cancellation threw (URLSession's cancellation, say).
            return nil
        }
    }

    private func autoFillSignIn() async throws -> TokenResponse? {
        let provider = passkeys
        enum Turn: Sendable { case picked(CredentialJSON), offersNone, renew }
        while !Task.isCancelled {
            let start = try decode(PasskeyChallengeResponse.self, try await send("POST", "passkey/challenge",
                body: PasskeyChallengeRequest(client_id: clientID, username: nil)))
            let options = start.authn_params_public_key
            // Renewed at half the session's life: a pick just before then still has the other
            // half for its exchange, however slow the network.
            let lifetime = Double(options.timeout ?? 300_000) / 1000
            let renewal = UInt64(max(lifetime / 2, 0.5) * 1_000_000_000)
            let turn: Turn
            do {
                turn = try await withThrowingTaskGroup(of: Turn.self) { group in
                    group.addTask { try await provider.assertPasskeyWithAutoFill(options).map(Turn.picked) ?? .offersNone }
                    group.addTask {
                        try await Task.sleep(nanoseconds: renewal)
                        return .renew
                    }
                    defer { group.cancelAll() }
                    return try await group.next() ?? .offersNone
                }
            } catch is CancellationError {
                return nil
            } catch let error as SignetError where error.code == .canceled {
                return nil
            }
            switch turn {
            case .picked(let credential): return try await exchange(session: start.auth_session, credential: credential)
            case .offersNone: return nil
            case .renew: continue
            }
        }
        return nil
    }
}
