import Foundation
import SignetAPI

extension Ceremonies {
    /// Scheduled rotation of the token-signing key (RFC 7517 §5: the JWKS holds the new key
    /// from the start, and the old one until its tokens have expired): once the newest key is
    /// `tokens.signing_key_rotation_days` old, a new one is added, published at once and signing
    /// ``KeyRing/signingDelay`` seconds later. Run from the minute's timer; audited as
    /// `signing_key_rotated` with the new `kid`. Returns that `kid`, or nil when none was due or
    /// this instance cannot open the key that signs (its `/healthz` says so).
    @discardableResult
    public func rotateSigningKeyIfDue() -> String? {
        let days = configuration.signingKeyRotationDays
        var event: AuditEvent?
        // The new key and its audit row commit together.
        guard days > 0, let kid = try? keys.rotateIfOlder(than: Int64(days) * 86_400, writes: { kid in
            let rotated = pendingAuditEvent(.signingKeyRotated, detail: "kid \(kid), after \(days) days; signs from \(nowMillis / 1000 + KeyRing.signingDelay)",
                                            context: RequestContext(remoteAddress: "", requestID: ""))
            event = rotated
            return [.audit(rotated)]
        }) else { return nil }
        event.map(counted)
        return kid
    }

    /// Destroys the retired signing keys no instance can still publish
    /// (``KeyRing/destroyRetired()``: a day after they stopped signing, 80 s after their
    /// retirement), each audited as `signing_key_destroyed` with its `kid`. Run from the
    /// minute's timer, after the rotation; returns the `kid`s.
    @discardableResult
    public func destroyRetiredSigningKeys() -> [String] {
        // Each deletion and its audit row commit together.
        var events: [AuditEvent] = []
        let kids = (try? keys.destroyRetired { kids in
            events = kids.map { pendingAuditEvent(.signingKeyDestroyed, detail: "kid \($0): out of every JWKS, every token it signed has expired",
                                                  context: RequestContext(remoteAddress: "", requestID: "")) }
            return events.map(StoreWrite.audit)
        }) ?? []
        events.forEach(counted)
        return kids
    }
}
