extension Notice {
    /// The text in French (formal: vous).
    func french(service: String) -> (subject: String, body: String) {
        let notYou = "Si ce n’était pas vous, connectez-vous avec une clé d’accès que vous aviez déjà et vérifiez votre compte."
        switch self {
        case .code(let code, let minutes):
            return ("Votre code \(service) : \(code)",
                    "Votre code pour vous connecter à \(service) :\n\n    \(code)\n\nIl expire dans \(minutes) minutes et ne sert qu’une fois. Personne de \(service) ne vous le demandera jamais.\nSi vous ne l’avez pas demandé, ignorez ce message.")
        case .passkeyAdded(let name):
            let label = name.map { " (\($0))" } ?? ""
            return ("Nouvelle clé d’accès sur \(service)", "Une clé d’accès\(label) a été ajoutée à votre compte \(service).\n\n\(notYou)")
        case .deviceKeyAdded(let name, let platform):
            let label = " (\(name ?? platform))"
            return ("Nouvel appareil sur \(service)", "Un appareil\(label) a été enregistré pour approuver des opérations sur votre compte \(service).\n\n\(notYou)")
        case .passkeyRemoved(let name, let byOperator):
            let label = name.map { " (\($0))" } ?? ""
            return ("Clé d’accès retirée sur \(service)",
                    "Une clé d’accès\(label) a été retirée de votre compte \(service)\(byOperator ? " par un administrateur" : "") ; elle ne permet plus de se connecter.\n\n\(notYou)")
        case .deviceKeyRemoved(let name, let platform, let byOperator):
            let label = " (\(name ?? platform))"
            return ("Appareil retiré sur \(service)",
                    "Un appareil\(label) a été retiré de votre compte \(service)\(byOperator ? " par un administrateur" : "") ; il n’approuve plus d’opérations.\n\n\(notYou)")
        case .recoveryOpened(let hours):
            return ("Récupération de votre compte \(service)",
                    "Quelqu’un s’est connecté avec un code (reçu par e-mail ou de récupération) et a ajouté un identifiant à votre compte \(service).\n\nPendant \(hours) heures, cet identifiant ne peut ni approuver d’opérations ni modifier vos clés d’accès antérieures.\n\(notYou) De là, vous pouvez annuler la récupération.")
        case .recoveryFinished:
            return ("Récupération terminée sur \(service)",
                    "L’attente de la récupération de votre compte \(service) est terminée : les identifiants qu’elle a ajoutés fonctionnent désormais pleinement.\n\n\(notYou)")
        case .recoveryCancelled:
            return ("Récupération annulée sur \(service)", "La récupération de votre compte \(service) a été annulée et tout ce qu’elle avait ajouté a été révoqué.")
        case .refreshTokenReused:
            return ("Session fermée sur \(service)",
                    "Une session de votre compte \(service) a été utilisée deux fois, ce qui indique une copie volée ; elle a été fermée.\n\n\(notYou)")
        case .recoveryCodesCreated:
            return ("Nouveaux codes de récupération sur \(service)",
                    "De nouveaux codes de récupération ont été créés pour votre compte \(service) ; les précédents ne fonctionnent plus.\n\n\(notYou)")
        case .recoveryCodeUsed(let remaining):
            return ("Code de récupération utilisé sur \(service)",
                    "Quelqu’un s’est connecté à votre compte \(service) avec un code de récupération.\nCodes de récupération restants : \(remaining).\n\n\(notYou)")
        case .accountDeleted:
            return ("Compte \(service) supprimé",
                    "Votre compte \(service) a été supprimé à votre demande, avec ses clés d’accès, ses appareils et ses sessions. Il ne peut pas être restauré.\nSi ce n’était pas vous, contactez \(service) au plus vite.")
        case .emailChangeCode(let code, let minutes):
            return ("Votre code \(service) : \(code)",
                    "Pour utiliser cette adresse pour votre compte \(service), saisissez ce code :\n\n    \(code)\n\nIl expire dans \(minutes) minutes et ne sert qu’une fois.\nSi vous ne l’avez pas demandé, ignorez ce message : l’adresse ne change pas sans lui.")
        case .emailChanged(let address):
            return ("Adresse modifiée sur \(service)",
                    "L’adresse e-mail de votre compte \(service) a été remplacée par \(address). Les avis y seront envoyés désormais.\n\n\(notYou)")
        case .accountCreated:
            return ("Votre compte \(service)",
                    "Un compte \(service) a été créé pour cette adresse.\n\nPour vous connecter, ouvrez \(service), saisissez cette adresse et demandez un code par e-mail. Ajoutez ensuite une clé d’accès : c’est elle qui vous connectera désormais.\nSi vous ne vous y attendiez pas, ignorez ce message.")
        case .emailSignIn(true):
            return ("Connexion par e-mail activée sur \(service)",
                    "Les codes envoyés à cette adresse permettent de nouveau de se connecter à votre compte \(service).\n\n\(notYou)")
        case .emailSignIn(false):
            return ("Connexion par e-mail désactivée sur \(service)",
                    "Les codes envoyés à cette adresse ne permettent plus de se connecter à votre compte \(service) : seules vos clés d’accès et vos codes de récupération le permettent. Conservez-les en lieu sûr.\n\n\(notYou)")
        case .passkeyModelRefused(let count, let names, let model):
            let label = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
            let (passkeys, their, them) = count == 1 ? ("Votre clé d’accès\(label) ne permet", "son", "celle-ci") : ("Vos clés d’accès\(label) ne permettent", "leur", "celles-ci")
            return ("\(count == 1 ? "Une clé d’accès ne fonctionne" : "Des clés d’accès ne fonctionnent") plus sur \(service)",
                    "\(passkeys) plus de vous connecter à \(service)\u{00A0}: \(their) modèle, \(model), a été signalé comme compromis auprès de la FIDO Alliance.\n\nConnectez-vous autrement (une autre clé d’accès, un code envoyé à cette adresse ou un code de récupération), ajoutez une nouvelle clé d’accès et retirez \(them) de votre compte.")
        }
    }
}
