import SignetAPI

extension SignetClient {
    /// Waits until no other use of the refresh token is in flight, then holds the turn until
    /// ``endRotation()``. Each use rotates the token (RFC 9700 §4.14.2), so two at once would
    /// present one token twice, which the server takes for a stolen token's reuse. Turns go in
    /// the order asked.
    func exclusiveRotation() async {
        guard rotating else {
            rotating = true
            return
        }
        await withCheckedContinuation { rotationWaiters.append($0) }
    }

    /// Hands the turn to the next waiting use, if any.
    func endRotation() {
        if rotationWaiters.isEmpty { rotating = false } else { rotationWaiters.removeFirst().resume() }
    }

    /// Whether the stored session still holds `used`, the refresh token a rotation just spent.
    /// A sign-out or a new sign-in while it was on the wire replaced the session: the rotation's
    /// tokens are then no session's, and its new refresh token is revoked (best effort) rather
    /// than stored over the session that replaced it.
    func stillCurrent(_ used: String, rotatedTo rotated: String?) async throws -> Bool {
        if try tokens.load()?.refreshToken == used { return true }
        if let rotated {
            _ = try? await send("POST", "oauth/revoke", body: RevokeRequest(token: rotated, token_type_hint: "refresh_token", client_id: clientID))
        }
        return false
    }
}
