import Foundation
import SignetAPI

/// The messages Signet sends, in English, Spanish and French (DESIGN.md, "Email codes",
/// "Security notices"; one file of text a language). Plain text, short, and never a link to
/// click: a notice says what happened and
/// what to do if it was not the reader.
public enum Notice: Sendable, Equatable {
    /// A sign-in code.
    case code(String, minutes: Int)
    case passkeyAdded(name: String?)
    case deviceKeyAdded(name: String?, platform: String)
    /// A passkey taken off the account, by its owner or an operator (`byOperator`).
    case passkeyRemoved(name: String?, byOperator: Bool)
    /// A device key taken off the account, by its owner or an operator (`byOperator`).
    case deviceKeyRemoved(name: String?, platform: String, byOperator: Bool)
    case recoveryOpened(hours: Int)
    case recoveryFinished
    case recoveryCancelled
    case refreshTokenReused
    case recoveryCodesCreated
    /// A recovery code signed someone in; `remaining` codes of the set are left.
    case recoveryCodeUsed(remaining: Int)
    /// The owner erased the account: the last message to the address.
    case accountDeleted
    /// A code that confirms a new address for the account (sent to that address).
    case emailChangeCode(String, minutes: Int)
    /// The account's address was changed to `to` (sent to the address it had).
    case emailChanged(to: String)
    /// An operator made an account for the address (`POST /api/v2/users`): how to sign in.
    case accountCreated
    /// The owner turned sign-in by email code off (`enabled` false) or on.
    case emailSignIn(enabled: Bool)
    /// The Metadata Service's BLOB reports the model of `count` of the account's passkeys (those
    /// named `names`) compromised (FIDO MDS 3.0 §3.1.4): they no longer sign in.
    case passkeyModelRefused(count: Int, names: [String], model: String)

    /// The `X-Signet-Kind` and outbox kind.
    public var kind: String {
        switch self {
        case .code: "otp"
        case .passkeyAdded: "passkey_added"
        case .deviceKeyAdded: "device_key_added"
        case .passkeyRemoved: "passkey_removed"
        case .deviceKeyRemoved: "device_key_removed"
        case .recoveryOpened: "recovery_opened"
        case .recoveryFinished: "recovery_finished"
        case .recoveryCancelled: "recovery_cancelled"
        case .refreshTokenReused: "refresh_token_reused"
        case .recoveryCodesCreated: "recovery_codes_created"
        case .recoveryCodeUsed: "recovery_code_used"
        case .accountDeleted: "account_deleted"
        case .emailChangeCode: "email_change_code"
        case .emailChanged: "email_changed"
        case .accountCreated: "account_created"
        case .emailSignIn(let enabled): enabled ? "email_sign_in_on" : "email_sign_in_off"
        case .passkeyModelRefused: "passkey_model_refused"
        }
    }

    /// The languages messages exist in; anything else gets English.
    public static let languages = Languages.codes

    /// The first of `header`'s languages (an `Accept-Language` value, RFC 9110 §12.5.4) that
    /// Signet writes in, by weight; `en` when none.
    public static func language(acceptLanguage header: String?) -> String {
        AcceptLanguage.preferred(header, among: languages) ?? "en"
    }

    /// Subject and body in `language` (English for any other), naming the service `service`.
    public func text(language: String, service: String) -> (subject: String, body: String) {
        switch language {
        case "es": spanish(service: service)
        case "fr": french(service: service)
        case "de": german(service: service)
        default: english(service: service)
        }
    }
}
