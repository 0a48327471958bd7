#if canImport(AuthenticationServices)
import AuthenticationServices
import Foundation
import SignetAPI
import SignetClient

/// The browser sign-in (``SignetClient/authorizationURL(redirectURI:scope:prompt:loginHint:uiLocales:acrValues:pushed:)``)
/// in the system's browser sheet, ASWebAuthenticationSession (AuthenticationServices, iOS 12+,
/// macOS 10.15+): Signet's hosted pages, with the browser's own passkeys and the email code,
/// then back to the app with the code, which is exchanged for the session.
///
/// The redirect URI is a private-use scheme (`com.example.app:/oauth`, RFC 8252 §7.1), or on
/// iOS 17.4 and macOS 14.4 and later a claimed https URL of the app's associated domain
/// (RFC 8252 §7.2). Canceling the sheet (`ASWebAuthenticationSessionError.canceledLogin`) is
/// `SignetError(.canceled)`.
@available(iOS 13.0, macOS 10.15, *)
@MainActor
public final class WebAuthenticationSignIn: NSObject, ASWebAuthenticationPresentationContextProviding {
    private let anchor: @MainActor () -> ASPresentationAnchor
    private var session: ASWebAuthenticationSession?
    /// Without cookies shared with Safari: every sign-in shows the page (no SSO across apps).
    public var prefersEphemeralSession = false

    /// - Parameter anchor: the window the sheet is shown over.
    public init(anchor: @escaping @MainActor () -> ASPresentationAnchor) {
        self.anchor = anchor
    }

    public func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor { anchor() }

    /// Runs the browser sign-in for `client` and makes its tokens the session.
    /// - Parameters:
    ///   - redirectURI: registered for the client; its scheme (or https host and path) is what
    ///     the sheet waits for.
    ///   - acrValues: `phr` for a passkey's sign-in (RFC 9470 §4), when an API asked for one.
    ///   - pushed: push the request first (RFC 9126), so the sheet's URL carries only its reference.
    @discardableResult
    public func signIn(_ client: SignetClient, redirectURI: String, prompt: String? = nil, loginHint: String? = nil,
                       acrValues: String? = nil, pushed: Bool = false) async throws -> TokenResponse {
        let signIn = try await client.authorizationURL(redirectURI: redirectURI, prompt: prompt, loginHint: loginHint, acrValues: acrValues, pushed: pushed)
        let callback = try await present(signIn.url, redirectURI: redirectURI)
        return try await client.completeBrowserSignIn(callback: callback, for: signIn)
    }

    /// Shows the sheet at `url` until the browser goes to `redirectURI`; returns that URL.
    func present(_ url: URL, redirectURI: String) async throws -> URL {
        guard let redirect = URLComponents(string: redirectURI), let scheme = redirect.scheme else {
            throw SignetError(.invalidResponse, "the redirect URI \(redirectURI) has no scheme")
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
            let done: ASWebAuthenticationSession.CompletionHandler = { callbackURL, error in
                if let callbackURL {
                    continuation.resume(returning: callbackURL)
                } else if let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin {
                    continuation.resume(throwing: SignetError(.canceled, "the sign-in sheet was closed"))
                } else {
                    continuation.resume(throwing: SignetError(.authorizationFailed, error?.localizedDescription ?? "the sign-in sheet failed"))
                }
            }
            var made: ASWebAuthenticationSession?
            if #available(iOS 17.4, macOS 14.4, *) {
                if scheme == "https", let host = redirect.host {
                    made = ASWebAuthenticationSession(url: url, callback: .https(host: host, path: redirect.path), completionHandler: done)
                }
            }
            let session = made ?? ASWebAuthenticationSession(url: url, callbackURLScheme: scheme, completionHandler: done)
            session.presentationContextProvider = self
            session.prefersEphemeralWebBrowserSession = prefersEphemeralSession
            self.session = session
            if !session.start() {
                continuation.resume(throwing: SignetError(.authorizationFailed, "the sign-in sheet could not start"))
            }
        }
    }
}
#endif
