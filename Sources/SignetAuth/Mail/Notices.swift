import Foundation
import SignetAPI

/// The messages Signet sends, in English and Spanish (DESIGN.md, "Email codes", "Security
/// notices"). Plain text, short, and never a link to click: a notice says what happened and
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
        }
    }

    /// The languages messages exist in; anything else gets English.
    public static let languages = ["en", "es"]

    /// The first of `header`'s languages (an `Accept-Language` value, RFC 9110 §12.5.4) that
    /// Signet writes in, by weight; `en` when none.
    public static func language(acceptLanguage header: String?) -> String {
        AcceptLanguage.preferred(header, among: languages) ?? "en"
    }

    /// Subject and body in `language`, naming the service `service`.
    public func text(language: String, service: String) -> (subject: String, body: String) {
        let es = language == "es"
        let notYou = es
            ? "Si no fue usted, inicie sesión con una llave de acceso que ya tenía y revise su cuenta."
            : "If this was not you, sign in with a passkey you already had and review your account."
        switch self {
        case .code(let code, let minutes):
            return es
                ? ("Su código de \(service): \(code)",
                   "Su código para iniciar sesión en \(service) es:\n\n    \(code)\n\nCaduca en \(minutes) minutos y sirve una sola vez. Nadie de \(service) se lo pedirá nunca.\nSi no lo pidió, ignore este mensaje.")
                : ("Your \(service) code: \(code)",
                   "Your code to sign in to \(service) is:\n\n    \(code)\n\nIt expires in \(minutes) minutes and works once. Nobody from \(service) will ever ask you for it.\nIf you did not ask for it, ignore this message.")
        case .passkeyAdded(let name):
            let label = name.map { " (\($0))" } ?? ""
            return es
                ? ("Nueva llave de acceso en \(service)", "Se añadió una llave de acceso\(label) a su cuenta de \(service).\n\n\(notYou)")
                : ("New passkey on \(service)", "A passkey\(label) was added to your \(service) account.\n\n\(notYou)")
        case .deviceKeyAdded(let name, let platform):
            let label = " (\(name ?? platform))"
            return es
                ? ("Nuevo dispositivo en \(service)", "Se registró un dispositivo\(label) para aprobar operaciones en su cuenta de \(service).\n\n\(notYou)")
                : ("New device on \(service)", "A device\(label) was enrolled to approve actions on your \(service) account.\n\n\(notYou)")
        case .passkeyRemoved(let name, let byOperator):
            let label = name.map { " (\($0))" } ?? ""
            return es
                ? ("Llave de acceso retirada en \(service)",
                   "Se retiró una llave de acceso\(label) de su cuenta de \(service)\(byOperator ? " por un administrador" : ""); ya no sirve para iniciar sesión.\n\n\(notYou)")
                : ("Passkey removed on \(service)",
                   "A passkey\(label) was removed from your \(service) account\(byOperator ? " by an administrator" : ""); it no longer signs in.\n\n\(notYou)")
        case .deviceKeyRemoved(let name, let platform, let byOperator):
            let label = " (\(name ?? platform))"
            return es
                ? ("Dispositivo retirado en \(service)",
                   "Se retiró un dispositivo\(label) de su cuenta de \(service)\(byOperator ? " por un administrador" : ""); ya no aprueba operaciones.\n\n\(notYou)")
                : ("Device removed on \(service)",
                   "A device\(label) was removed from your \(service) account\(byOperator ? " by an administrator" : ""); it no longer approves actions.\n\n\(notYou)")
        case .recoveryOpened(let hours):
            return es
                ? ("Recuperación de su cuenta de \(service)",
                   "Alguien inició sesión con un código (de correo o de recuperación) y añadió una credencial a su cuenta de \(service).\n\nDurante \(hours) horas esa credencial no puede aprobar operaciones ni cambiar sus llaves anteriores.\n\(notYou) Desde allí puede cancelar la recuperación.")
                : ("Recovery of your \(service) account",
                   "Someone signed in with a code (from email or a recovery code) and added a credential to your \(service) account.\n\nFor \(hours) hours that credential cannot approve actions or change your earlier passkeys.\n\(notYou) From there you can cancel the recovery.")
        case .recoveryFinished:
            return es
                ? ("Recuperación terminada en \(service)", "La espera de la recuperación de su cuenta de \(service) terminó: las credenciales que añadió funcionan ya por completo.\n\n\(notYou)")
                : ("Recovery finished on \(service)", "The hold on the recovery of your \(service) account has ended: the credentials it added now work fully.\n\n\(notYou)")
        case .recoveryCancelled:
            return es
                ? ("Recuperación cancelada en \(service)", "La recuperación de su cuenta de \(service) se canceló y se revocó todo lo que añadió.")
                : ("Recovery cancelled on \(service)", "The recovery of your \(service) account was cancelled and everything it added was revoked.")
        case .refreshTokenReused:
            return es
                ? ("Sesión cerrada en \(service)", "Una sesión de su cuenta de \(service) se usó dos veces, lo que apunta a una copia robada; se cerró.\n\n\(notYou)")
                : ("Session ended on \(service)", "A session of your \(service) account was used twice, which points to a stolen copy; it has been ended.\n\n\(notYou)")
        case .recoveryCodesCreated:
            return es
                ? ("Nuevos códigos de recuperación en \(service)", "Se crearon nuevos códigos de recuperación para su cuenta de \(service); los anteriores ya no sirven.\n\n\(notYou)")
                : ("New recovery codes on \(service)", "New recovery codes were made for your \(service) account; the earlier ones no longer work.\n\n\(notYou)")
        case .recoveryCodeUsed(let remaining):
            return es
                ? ("Código de recuperación usado en \(service)",
                   "Se inició sesión en su cuenta de \(service) con un código de recuperación.\nCódigos de recuperación que quedan: \(remaining).\n\n\(notYou)")
                : ("Recovery code used on \(service)",
                   "Someone signed in to your \(service) account with a recovery code.\nRecovery codes left: \(remaining).\n\n\(notYou)")
        case .accountDeleted:
            return es
                ? ("Cuenta de \(service) eliminada",
                   "Su cuenta de \(service) se eliminó a petición suya, con sus llaves de acceso, dispositivos y sesiones. No se puede recuperar.\nSi no fue usted, póngase en contacto con \(service) cuanto antes.")
                : ("\(service) account deleted",
                   "Your \(service) account was deleted at your request, with its passkeys, devices and sessions. It cannot be restored.\nIf this was not you, contact \(service) at once.")
        case .emailChangeCode(let code, let minutes):
            return es
                ? ("Su código de \(service): \(code)",
                   "Para usar esta dirección en su cuenta de \(service), escriba este código:\n\n    \(code)\n\nCaduca en \(minutes) minutos y sirve una sola vez.\nSi no lo pidió, ignore este mensaje: la dirección no cambia sin él.")
                : ("Your \(service) code: \(code)",
                   "To use this address for your \(service) account, enter this code:\n\n    \(code)\n\nIt expires in \(minutes) minutes and works once.\nIf you did not ask for it, ignore this message: the address does not change without it.")
        case .emailChanged(let address):
            return es
                ? ("Dirección cambiada en \(service)",
                   "La dirección de correo de su cuenta de \(service) se cambió a \(address). Los avisos irán allí desde ahora.\n\n\(notYou)")
                : ("Address changed on \(service)",
                   "The email address of your \(service) account was changed to \(address). Notices go there from now on.\n\n\(notYou)")
        case .accountCreated:
            return es
                ? ("Su cuenta de \(service)",
                   "Se creó una cuenta de \(service) para esta dirección.\n\nPara entrar, abra \(service), escriba esta dirección y pida un código por correo. Después añada una llave de acceso: con ella entrará en adelante.\nSi no la esperaba, ignore este mensaje.")
                : ("Your \(service) account",
                   "An account on \(service) was made for this address.\n\nTo sign in, open \(service), enter this address and ask for a code by email. Then add a passkey: from then on it signs you in.\nIf you did not expect this, ignore this message.")
        case .emailSignIn(true):
            return es
                ? ("Inicio de sesión por correo activado en \(service)",
                   "Los códigos enviados a esta dirección vuelven a iniciar sesión en su cuenta de \(service).\n\n\(notYou)")
                : ("Sign-in by email turned on for \(service)",
                   "Codes sent to this address sign in to your \(service) account again.\n\n\(notYou)")
        case .emailSignIn(false):
            return es
                ? ("Inicio de sesión por correo desactivado en \(service)",
                   "Los códigos enviados a esta dirección ya no inician sesión en su cuenta de \(service): solo lo hacen sus llaves de acceso y sus códigos de recuperación. Guárdelos bien.\n\n\(notYou)")
                : ("Sign-in by email turned off for \(service)",
                   "Codes sent to this address no longer sign in to your \(service) account: only its passkeys and recovery codes do. Keep them safe.\n\n\(notYou)")
        }
    }
}
