#if canImport(Security)
import Foundation
import Security
import SignetClient

/// A URLSession delegate that enforces an ``SPKIPinSet`` on top of the system's trust
/// evaluation: the chain must verify as usual *and* contain a pinned key. Give the session made
/// with it to ``SignetClient`` (`URLSession(configuration: .default, delegate: delegate,
/// delegateQueue: nil)`).
public final class PinningSessionDelegate: NSObject, URLSessionDelegate, Sendable {
    public let pins: SPKIPinSet
    /// The host the pins are for; other hosts get the system's default handling.
    public let host: String

    public init(host: String, pins: SPKIPinSet) {
        self.host = host
        self.pins = pins
    }

    public func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust, challenge.protectionSpace.host == host,
              let trust = challenge.protectionSpace.serverTrust
        else { return completionHandler(.performDefaultHandling, nil) }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error), let chain = SecTrustCopyCertificateChain(trust) as? [SecCertificate] else {
            return completionHandler(.cancelAuthenticationChallenge, nil)
        }
        let spkis: [Data] = chain.compactMap { certificate in
            guard let key = SecCertificateCopyKey(certificate), let external = SecKeyCopyExternalRepresentation(key, nil) as Data?,
                  let attributes = SecKeyCopyAttributes(key) as? [String: Any] else { return nil }
            let isRSA = (attributes[kSecAttrKeyType as String] as? String) == (kSecAttrKeyTypeRSA as String)
            return SPKIPinSet.spki(externalRepresentation: external, isRSA: isRSA)
        }
        guard pins.matches(chain: spkis) else { return completionHandler(.cancelAuthenticationChallenge, nil) }
        completionHandler(.useCredential, URLCredential(trust: trust))
    }
}
#endif
