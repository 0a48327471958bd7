#if canImport(AuthenticationServices)
import AuthenticationServices
import Foundation
import SignetAPI
import SignetClient

/// A ``PasskeyProvider`` on AuthenticationServices (iOS 16+, macOS 13+): the system passkey sheet.
/// Canceling it (ASAuthorizationError 1001, which also covers a broken domain association and
/// "no passkey here") surfaces as `SignetError(.canceled)`: show the existing sign-in form.
@available(iOS 16.0, macOS 13.0, *)
@MainActor
public final class PlatformPasskeyProvider: NSObject, PasskeyProvider {
    private let anchor: @MainActor () -> ASPresentationAnchor
    /// For sign-in, offer only passkeys already on the device (no QR code for another device).
    public var preferImmediatelyAvailableCredentials = true
    private var continuation: CheckedContinuation<ASAuthorization, any Error>?
    private var controller: ASAuthorizationController?
    /// How the request in flight was presented.
    private var presentation: Presentation?

    /// A sheet; a sheet of the passkeys on the device only; the keyboard's suggestions.
    private enum Presentation { case modal, immediate, autoFill }

    /// - Parameter anchor: the window the sheet is shown over.
    public init(anchor: @escaping @MainActor () -> ASPresentationAnchor) {
        self.anchor = anchor
    }

    public nonisolated func createPasskey(_ options: CreationOptionsJSON) async throws -> CredentialJSON {
        try await register(options, conditional: false)
    }

    /// A conditional registration (iOS 18, macOS 15: `requestStyle = .conditional`): no sheet;
    /// the system makes the passkey only when the user just signed in with its password manager,
    /// and fails otherwise, which is `nil` here, as on earlier systems.
    public nonisolated func createPasskeyConditionally(_ options: CreationOptionsJSON) async throws -> CredentialJSON? {
        guard #available(iOS 18.0, macOS 15.0, *) else { return nil }
        do {
            return try await register(options, conditional: true)
        } catch let error as SignetError where error.code == .canceled || error.code == .authorizationFailed || error.code == .credentialExcluded {
            return nil
        }
    }

    private nonisolated func register(_ options: CreationOptionsJSON, conditional: Bool) async throws -> CredentialJSON {
        guard let challenge = Data(base64URLEncoded: options.challenge), let userID = Data(base64URLEncoded: options.user.id) else {
            throw SignetError(.invalidResponse, "creation options hold invalid base64url")
        }
        let authorization = try await perform(.modal) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
            let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: options.user.name, userID: userID)
            if let preference = options.authenticatorSelection?.userVerification {
                request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
            }
            if conditional, #available(iOS 18.0, macOS 15.0, *) { request.requestStyle = .conditional }
            return request
        }
        guard let registration = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestationObject = registration.rawAttestationObject
        else { throw SignetError(.invalidResponse, "the system returned no attestation object") }
        let id = registration.credentialID.base64URLEncodedString
        return CredentialJSON(id: id, rawId: id, authenticatorAttachment: "platform", response: AuthenticatorResponseJSON(
            clientDataJSON: registration.rawClientDataJSON.base64URLEncodedString,
            attestationObject: attestationObject.base64URLEncodedString, transports: ["internal", "hybrid"]))
    }

    public nonisolated func assertPasskey(_ options: RequestOptionsJSON) async throws -> CredentialJSON {
        try await assert(options, autoFill: false)
    }

    /// An AutoFill-assisted request (iOS 16, macOS 13): the account's passkeys among the
    /// suggestions of a text field whose `textContentType` is `.username`, until the user picks
    /// one or the calling task is cancelled (`CancellationError`). A modal request started
    /// meanwhile ends it first.
    public nonisolated func assertPasskeyWithAutoFill(_ options: RequestOptionsJSON) async throws -> CredentialJSON? {
        try await assert(options, autoFill: true)
    }

    private nonisolated func assert(_ options: RequestOptionsJSON, autoFill: Bool) async throws -> CredentialJSON {
        guard let challenge = Data(base64URLEncoded: options.challenge), let rpID = options.rpId else {
            throw SignetError(.invalidResponse, "request options hold no rpId or an invalid challenge")
        }
        let allowed = (options.allowCredentials ?? []).compactMap { Data(base64URLEncoded: $0.id) }
        let immediate = await preferImmediatelyAvailableCredentials
        let authorization = try await perform(autoFill ? .autoFill : immediate ? .immediate : .modal) {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
            let request = provider.createCredentialAssertionRequest(challenge: challenge)
            request.allowedCredentials = allowed.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            if let preference = options.userVerification {
                request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
            }
            return request
        }
        guard let assertion = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            throw SignetError(.invalidResponse, "the system returned no assertion")
        }
        let id = assertion.credentialID.base64URLEncodedString
        return CredentialJSON(id: id, rawId: id, authenticatorAttachment: "platform", response: AuthenticatorResponseJSON(
            clientDataJSON: assertion.rawClientDataJSON.base64URLEncodedString,
            authenticatorData: assertion.rawAuthenticatorData.base64URLEncodedString,
            signature: assertion.signature.base64URLEncodedString, userHandle: assertion.userID.base64URLEncodedString))
    }

    /// Runs one request through ASAuthorizationController, whose delegate is bridged to async with a
    /// checked continuation resumed exactly once. A modal request ends an AutoFill one in flight
    /// (the sign-in button beside the field); cancelling the calling task cancels the request
    /// (`cancel()`, iOS 16) and throws `CancellationError`.
    private func perform(_ style: Presentation, _ makeRequest: @MainActor () -> ASAuthorizationRequest) async throws -> ASAuthorization {
        if style != .autoFill, presentation == .autoFill { cancelRequest() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard self.continuation == nil else {
                    continuation.resume(throwing: SignetError(.invalidResponse, "a passkey request is already in progress"))
                    return
                }
                guard !Task.isCancelled else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                self.continuation = continuation
                let controller = ASAuthorizationController(authorizationRequests: [makeRequest()])
                controller.delegate = self
                controller.presentationContextProvider = self
                self.controller = controller
                presentation = style
                switch style {
                case .modal: controller.performRequests()
                case .immediate: controller.performRequests(options: .preferImmediatelyAvailableCredentials)
                case .autoFill: controller.performAutoFillAssistedRequests()
                }
            }
        } onCancel: {
            Task { @MainActor in self.cancelRequest() }
        }
    }

    /// Ends the request in flight, if any, as cancelled; the controller's own answer to
    /// `cancel()` comes later and is ignored.
    private func cancelRequest() {
        guard let controller else { return }
        controller.cancel()
        finish(.failure(CancellationError()), from: controller)
    }

    private func finish(_ result: Result<ASAuthorization, any Error>, from sender: ASAuthorizationController) {
        guard let continuation, sender === controller else { return }
        self.continuation = nil
        controller = nil
        presentation = nil
        continuation.resume(with: result)
    }
}

@available(iOS 16.0, macOS 13.0, *)
extension PlatformPasskeyProvider: ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        finish(.success(authorization), from: controller)
    }

    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        let code = (error as? ASAuthorizationError)?.code.rawValue ?? (error as NSError).code
        switch code {
        case 1001:  // canceled (also a broken domain association, or no passkey on the device)
            finish(.failure(SignetError(.canceled, "the user canceled the passkey sheet")), from: controller)
        case 1006:  // matchedExcludedCredential (iOS 18): this device already has a passkey for the account
            finish(.failure(SignetError(.credentialExcluded, "a passkey for this account is already on this device")), from: controller)
        default:
            finish(.failure(SignetError(.authorizationFailed, "the passkey request failed (\(code))")), from: controller)
        }
    }

    public func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor() }
}
#endif
