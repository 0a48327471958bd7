extension Notice {
    /// The text in German (formal: Sie).
    func german(service: String) -> (subject: String, body: String) {
        let notYou = "Falls Sie das nicht waren, melden Sie sich mit einem Passkey an, den Sie schon hatten, und prüfen Sie Ihr Konto."
        switch self {
        case .code(let code, let minutes):
            return ("Ihr Code für \(service): \(code)",
                    "Ihr Code zur Anmeldung bei \(service):\n\n    \(code)\n\nEr läuft in \(minutes) Minuten ab und gilt nur einmal. Niemand von \(service) wird Sie je danach fragen.\nFalls Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht.")
        case .passkeyAdded(let name):
            let label = name.map { " (\($0))" } ?? ""
            return ("Neuer Passkey bei \(service)", "Ein Passkey\(label) wurde Ihrem Konto bei \(service) hinzugefügt.\n\n\(notYou)")
        case .deviceKeyAdded(let name, let platform):
            let label = " (\(name ?? platform))"
            return ("Neues Gerät bei \(service)", "Ein Gerät\(label) wurde registriert, um Vorgänge in Ihrem Konto bei \(service) zu genehmigen.\n\n\(notYou)")
        case .passkeyRemoved(let name, let byOperator):
            let label = name.map { " (\($0))" } ?? ""
            return ("Passkey entfernt bei \(service)",
                    "Ein Passkey\(label) wurde\(byOperator ? " von einem Administrator" : "") aus Ihrem Konto bei \(service) entfernt; er meldet nicht mehr an.\n\n\(notYou)")
        case .deviceKeyRemoved(let name, let platform, let byOperator):
            let label = " (\(name ?? platform))"
            return ("Gerät entfernt bei \(service)",
                    "Ein Gerät\(label) wurde\(byOperator ? " von einem Administrator" : "") aus Ihrem Konto bei \(service) entfernt; es genehmigt keine Vorgänge mehr.\n\n\(notYou)")
        case .recoveryOpened(let hours):
            return ("Wiederherstellung Ihres Kontos bei \(service)",
                    "Jemand hat sich mit einem Code (per E-Mail oder einem Wiederherstellungscode) angemeldet und Ihrem Konto bei \(service) eine Anmeldemethode hinzugefügt.\n\n\(hours) Stunden lang kann diese Anmeldemethode keine Vorgänge genehmigen und Ihre früheren Passkeys nicht ändern.\n\(notYou) Dort können Sie die Wiederherstellung abbrechen.")
        case .recoveryFinished:
            return ("Wiederherstellung abgeschlossen bei \(service)",
                    "Die Wartezeit der Wiederherstellung Ihres Kontos bei \(service) ist vorbei: Die dabei hinzugefügten Anmeldemethoden wirken jetzt voll.\n\n\(notYou)")
        case .recoveryCancelled:
            return ("Wiederherstellung abgebrochen bei \(service)", "Die Wiederherstellung Ihres Kontos bei \(service) wurde abgebrochen, und alles, was sie hinzugefügt hatte, wurde widerrufen.")
        case .refreshTokenReused:
            return ("Sitzung beendet bei \(service)",
                    "Eine Sitzung Ihres Kontos bei \(service) wurde zweimal verwendet, was auf eine gestohlene Kopie hinweist; sie wurde beendet.\n\n\(notYou)")
        case .recoveryCodesCreated:
            return ("Neue Wiederherstellungscodes bei \(service)",
                    "Für Ihr Konto bei \(service) wurden neue Wiederherstellungscodes erstellt; die bisherigen gelten nicht mehr.\n\n\(notYou)")
        case .recoveryCodeUsed(let remaining):
            return ("Wiederherstellungscode verwendet bei \(service)",
                    "Jemand hat sich mit einem Wiederherstellungscode bei Ihrem Konto bei \(service) angemeldet.\nVerbleibende Wiederherstellungscodes: \(remaining).\n\n\(notYou)")
        case .accountDeleted:
            return ("Konto bei \(service) gelöscht",
                    "Ihr Konto bei \(service) wurde auf Ihren Wunsch gelöscht, mit seinen Passkeys, Geräten und Sitzungen. Es lässt sich nicht wiederherstellen.\nFalls Sie das nicht waren, wenden Sie sich sofort an \(service).")
        case .emailChangeCode(let code, let minutes):
            return ("Ihr Code für \(service): \(code)",
                    "Um diese Adresse für Ihr Konto bei \(service) zu verwenden, geben Sie diesen Code ein:\n\n    \(code)\n\nEr läuft in \(minutes) Minuten ab und gilt nur einmal.\nFalls Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht: Ohne ihn ändert sich die Adresse nicht.")
        case .emailChanged(let address):
            return ("Adresse geändert bei \(service)",
                    "Die E-Mail-Adresse Ihres Kontos bei \(service) wurde in \(address) geändert. Benachrichtigungen gehen ab jetzt dorthin.\n\n\(notYou)")
        case .accountCreated:
            return ("Ihr Konto bei \(service)",
                    "Für diese Adresse wurde ein Konto bei \(service) erstellt.\n\nUm sich anzumelden, öffnen Sie \(service), geben Sie diese Adresse ein und fordern Sie einen Code per E-Mail an. Fügen Sie danach einen Passkey hinzu: Ab dann meldet er Sie an.\nFalls Sie das nicht erwartet haben, ignorieren Sie diese Nachricht.")
        case .emailSignIn(true):
            return ("Anmeldung per E-Mail eingeschaltet bei \(service)",
                    "Codes an diese Adresse melden wieder bei Ihrem Konto bei \(service) an.\n\n\(notYou)")
        case .emailSignIn(false):
            return ("Anmeldung per E-Mail ausgeschaltet bei \(service)",
                    "Codes an diese Adresse melden nicht mehr bei Ihrem Konto bei \(service) an: Das tun nur noch seine Passkeys und Wiederherstellungscodes. Bewahren Sie sie sicher auf.\n\n\(notYou)")
        case .passkeyModelRefused(let count, let names, let model):
            let label = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
            let (passkeys, their, them) = count == 1 ? ("Ihr Passkey\(label) meldet", "Sein", "ihn") : ("Ihre Passkeys\(label) melden", "Ihr", "sie")
            return ("\(count == 1 ? "Ein Passkey funktioniert" : "Passkeys funktionieren") nicht mehr bei \(service)",
                    "\(passkeys) Sie nicht mehr bei \(service) an: \(their) Modell, \(model), wurde der FIDO Alliance als kompromittiert gemeldet.\n\nMelden Sie sich anders an (mit einem anderen Passkey, einem Code an diese Adresse oder einem Wiederherstellungscode), fügen Sie einen neuen Passkey hinzu und entfernen Sie \(them) aus Ihrem Konto.")
        }
    }
}
