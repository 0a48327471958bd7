import Foundation
import SignetAPI
import SignetCrypto
import SignetWebAuthn

/// A log stream's POSTs signed as Standard Webhooks signs them (standardwebhooks.com, "Signature
/// scheme"): `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a
/// space-separated list of `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under a
/// secret, one for each secret that signs. The secret is shown as `whsec_` and its base64, once,
/// when it is made; the endpoint checks one signature, the time (its own tolerance), and that it
/// has not seen the ID. While a rotated-out secret still signs, each POST carries both
/// signatures, so an endpoint can move to the new secret at its own pace.
public enum LogStreamSigning {
    /// A secret's bytes: 256 bits, inside the 24 to 64 bytes the scheme asks for.
    public static let secretBytes = 32
    /// How long a rotated-out secret signs beside the new one by default (seconds), and at most.
    public static let defaultOverlap: Int64 = 86_400
    public static let maximumOverlap: Int64 = 7 * 86_400

    /// A secret as it is handed over: `whsec_` and its standard base64.
    public static func encoded(_ secret: [UInt8]) -> String { "whsec_" + Data(secret).base64EncodedString() }

    /// The associated data a stream's secrets are sealed with: the stream's ID and a label, so
    /// neither another stream's secrets nor its `Authorization` value opens in their place.
    public static func associatedData(streamID: String) -> [UInt8] { Array("\(streamID) signing".utf8) }

    /// `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under `secret`.
    public static func signature(secret: [UInt8], id: String, timestamp: Int64, body: [UInt8]) -> String {
        "v1," + Data(Digest.sha256.hmac(key: secret, data: Array("\(id).\(timestamp).".utf8) + body)).base64EncodedString()
    }

    /// The three headers of a POST: `secrets` are the current one first, then the previous one
    /// while it still signs.
    public static func headers(secrets: [[UInt8]], id: String, timestamp: Int64, body: [UInt8]) -> [String] {
        ["webhook-id: " + id, "webhook-timestamp: \(timestamp)",
         "webhook-signature: " + secrets.map { signature(secret: $0, id: id, timestamp: timestamp, body: body) }.joined(separator: " ")]
    }

    /// The secrets that sign at `now` (milliseconds), from a stream's `opened` secrets: the
    /// current one, and the previous one until `previousUntil`. `nil` when they are not one or
    /// two whole secrets.
    static func signing(_ opened: [UInt8], previousUntil: Int64, now: Int64) -> [[UInt8]]? {
        guard !opened.isEmpty, opened.count % secretBytes == 0, opened.count <= 2 * secretBytes else { return nil }
        let current = Array(opened.prefix(secretBytes))
        guard opened.count == 2 * secretBytes, now < previousUntil else { return [current] }
        return [current, Array(opened.suffix(secretBytes))]
    }
}

extension Ceremonies {
    /// `POST /api/v2/log-streams/{id}/rotate-secret` (Signet's own, as Auth0's for a client): a
    /// new signing secret, returned this once. The one it replaces signs beside it for
    /// `overlap` seconds (0 to 7 days; 0: it stops at once, for a secret that leaked), so the
    /// endpoint can take the new one without refusing a POST. A stream made before signing
    /// existed gets its first secret here.
    public func rotateLogStreamSecret(id: String, overlap: Int64 = LogStreamSigning.defaultOverlap, by caller: ManagementCaller,
                                      context: RequestContext) throws -> (stream: LogStreamRow, secret: String) {
        guard (0...LogStreamSigning.maximumOverlap).contains(overlap) else {
            throw AuthError.malformed("the previous secret may sign for 0 to \(LogStreamSigning.maximumOverlap) seconds")
        }
        let before = try logStream(id: id)
        let now = nowMillis
        let secret = random(LogStreamSigning.secretBytes)
        var after = before
        var kept: [UInt8] = []
        if overlap > 0, let sealed = before.signing {
            // The secret signing now stays; one rotated out before this goes.
            guard let opened = try? AESGCM.open(sealed, key: logStreamKey, aad: LogStreamSigning.associatedData(streamID: id)),
                  let current = LogStreamSigning.signing(opened, previousUntil: 0, now: now)?.first else {
                throw AuthError(.conflict, "log stream \(id.prefix(64))'s secret does not open under this key-encryption key: rotate with no overlap")
            }
            kept = current
        }
        after.signing = try AESGCM.seal(secret + kept, key: logStreamKey, aad: LogStreamSigning.associatedData(streamID: id))
        after.signingPreviousUntil = kept.isEmpty ? 0 : now + overlap * 1000
        let detail = "log stream \(id): signing secret rotated" + (kept.isEmpty ? ", the previous one no longer signs" : ", the previous one signs too for \(overlap) s")
        return (try write(after, over: before, detail: detail, by: caller, context: context), LogStreamSigning.encoded(secret))
    }
}
