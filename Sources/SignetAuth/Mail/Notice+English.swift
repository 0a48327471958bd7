extension Notice {
    /// The text in English, the language of any reader whose language Signet does not write.
    func english(service: String) -> (subject: String, body: String) {
        let notYou = "If this was not you, sign in with a passkey you already had and review your account."
        switch self {
        case .code(let code, let minutes):
            return ("Your \(service) code: \(code)",
                    "Your code to sign in to \(service) is:\n\n    \(code)\n\nIt expires in \(minutes) minutes and works once. Nobody from \(service) will ever ask you for it.\nIf you did not ask for it, ignore this message.")
        case .passkeyAdded(let name):
            let label = name.map { " (\($0))" } ?? ""
            return ("New passkey on \(service)", "A passkey\(label) was added to your \(service) account.\n\n\(notYou)")
        case .deviceKeyAdded(let name, let platform):
            let label = " (\(name ?? platform))"
            return ("New device on \(service)", "A device\(label) was enrolled to approve actions on your \(service) account.\n\n\(notYou)")
        case .passkeyRemoved(let name, let byOperator):
            let label = name.map { " (\($0))" } ?? ""
            return ("Passkey removed on \(service)",
                    "A passkey\(label) was removed from your \(service) account\(byOperator ? " by an administrator" : ""); it no longer signs in.\n\n\(notYou)")
        case .deviceKeyRemoved(let name, let platform, let byOperator):
            let label = " (\(name ?? platform))"
            return ("Device removed on \(service)",
                    "A device\(label) was removed from your \(service) account\(byOperator ? " by an administrator" : ""); it no longer approves actions.\n\n\(notYou)")
        case .recoveryOpened(let hours):
            return ("Recovery of your \(service) account",
                    "Someone signed in with a code (from email or a recovery code) and added a credential to your \(service) account.\n\nFor \(hours) hours that credential cannot approve actions or change your earlier passkeys.\n\(notYou) From there you can cancel the recovery.")
        case .recoveryFinished:
            return ("Recovery finished on \(service)", "The hold on the recovery of your \(service) account has ended: the credentials it added now work fully.\n\n\(notYou)")
        case .recoveryCancelled:
            return ("Recovery cancelled on \(service)", "The recovery of your \(service) account was cancelled and everything it added was revoked.")
        case .refreshTokenReused:
            return ("Session ended on \(service)", "A session of your \(service) account was used twice, which points to a stolen copy; it has been ended.\n\n\(notYou)")
        case .recoveryCodesCreated:
            return ("New recovery codes on \(service)", "New recovery codes were made for your \(service) account; the earlier ones no longer work.\n\n\(notYou)")
        case .recoveryCodeUsed(let remaining):
            return ("Recovery code used on \(service)",
                    "Someone signed in to your \(service) account with a recovery code.\nRecovery codes left: \(remaining).\n\n\(notYou)")
        case .accountDeleted:
            return ("\(service) account deleted",
                    "Your \(service) account was deleted at your request, with its passkeys, devices and sessions. It cannot be restored.\nIf this was not you, contact \(service) at once.")
        case .emailChangeCode(let code, let minutes):
            return ("Your \(service) code: \(code)",
                    "To use this address for your \(service) account, enter this code:\n\n    \(code)\n\nIt expires in \(minutes) minutes and works once.\nIf you did not ask for it, ignore this message: the address does not change without it.")
        case .emailChanged(let address):
            return ("Address changed on \(service)",
                    "The email address of your \(service) account was changed to \(address). Notices go there from now on.\n\n\(notYou)")
        case .accountCreated:
            return ("Your \(service) account",
                    "An account on \(service) was made for this address.\n\nTo sign in, open \(service), enter this address and ask for a code by email. Then add a passkey: from then on it signs you in.\nIf you did not expect this, ignore this message.")
        case .emailSignIn(true):
            return ("Sign-in by email turned on for \(service)",
                    "Codes sent to this address sign in to your \(service) account again.\n\n\(notYou)")
        case .emailSignIn(false):
            return ("Sign-in by email turned off for \(service)",
                    "Codes sent to this address no longer sign in to your \(service) account: only its passkeys and recovery codes do. Keep them safe.\n\n\(notYou)")
        case .passkeyModelRefused(let count, let names, let model):
            let label = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
            let (passkeys, their, them) = count == 1 ? ("passkey\(label) no longer signs", "its", "this one") : ("passkeys\(label) no longer sign", "their", "these")
            return ("\(count == 1 ? "A passkey" : "Passkeys") stopped working on \(service)",
                    "Your \(passkeys) in to \(service): \(their) model, \(model), was reported compromised to the FIDO Alliance.\n\nSign in another way (another passkey, a code sent to this address, or a recovery code), add a new passkey, and remove \(them) from your account.")
        }
    }
}
