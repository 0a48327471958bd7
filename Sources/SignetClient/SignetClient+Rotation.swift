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
}
