extension Notice {
    /// The text in Spanish (formal: usted).
    func spanish(service: String) -> (subject: String, body: String) {
        let notYou = "Si no fue usted, inicie sesión con una llave de acceso que ya tenía y revise su cuenta."
        switch self {
        case .code(let code, let minutes):
            return ("Su código de \(service): \(code)",
                    "Su código para iniciar sesión en \(service) es:\n\n    \(code)\n\nCaduca en \(minutes) minutos y sirve una sola vez. Nadie de \(service) se lo pedirá nunca.\nSi no lo pidió, ignore este mensaje.")
        case .passkeyAdded(let name):
            let label = name.map { " (\($0))" } ?? ""
            return ("Nueva llave de acceso en \(service)", "Se añadió una llave de acceso\(label) a su cuenta de \(service).\n\n\(notYou)")
        case .deviceKeyAdded(let name, let platform):
            let label = " (\(name ?? platform))"
            return ("Nuevo dispositivo en \(service)", "Se registró un dispositivo\(label) para aprobar operaciones en su cuenta de \(service).\n\n\(notYou)")
        case .passkeyRemoved(let name, let byOperator):
            let label = name.map { " (\($0))" } ?? ""
            return ("Llave de acceso retirada en \(service)",
                    "Se retiró una llave de acceso\(label) de su cuenta de \(service)\(byOperator ? " por un administrador" : ""); ya no sirve para iniciar sesión.\n\n\(notYou)")
        case .deviceKeyRemoved(let name, let platform, let byOperator):
            let label = " (\(name ?? platform))"
            return ("Dispositivo retirado en \(service)",
                    "Se retiró un dispositivo\(label) de su cuenta de \(service)\(byOperator ? " por un administrador" : ""); ya no aprueba operaciones.\n\n\(notYou)")
        case .recoveryOpened(let hours):
            return ("Recuperación de su cuenta de \(service)",
                    "Alguien inició sesión con un código (de correo o de recuperación) y añadió una credencial a su cuenta de \(service).\n\nDurante \(hours) horas esa credencial no puede aprobar operaciones ni cambiar sus llaves anteriores.\n\(notYou) Desde allí puede cancelar la recuperación.")
        case .recoveryFinished:
            return ("Recuperación terminada en \(service)", "La espera de la recuperación de su cuenta de \(service) terminó: las credenciales que añadió funcionan ya por completo.\n\n\(notYou)")
        case .recoveryCancelled:
            return ("Recuperación cancelada en \(service)", "La recuperación de su cuenta de \(service) se canceló y se revocó todo lo que añadió.")
        case .refreshTokenReused:
            return ("Sesión cerrada en \(service)", "Una sesión de su cuenta de \(service) se usó dos veces, lo que apunta a una copia robada; se cerró.\n\n\(notYou)")
        case .recoveryCodesCreated:
            return ("Nuevos códigos de recuperación en \(service)", "Se crearon nuevos códigos de recuperación para su cuenta de \(service); los anteriores ya no sirven.\n\n\(notYou)")
        case .recoveryCodeUsed(let remaining):
            return ("Código de recuperación usado en \(service)",
                    "Se inició sesión en su cuenta de \(service) con un código de recuperación.\nCódigos de recuperación que quedan: \(remaining).\n\n\(notYou)")
        case .accountDeleted:
            return ("Cuenta de \(service) eliminada",
                    "Su cuenta de \(service) se eliminó a petición suya, con sus llaves de acceso, dispositivos y sesiones. No se puede recuperar.\nSi no fue usted, póngase en contacto con \(service) cuanto antes.")
        case .emailChangeCode(let code, let minutes):
            return ("Su código de \(service): \(code)",
                    "Para usar esta dirección en su cuenta de \(service), escriba este código:\n\n    \(code)\n\nCaduca en \(minutes) minutos y sirve una sola vez.\nSi no lo pidió, ignore este mensaje: la dirección no cambia sin él.")
        case .emailChanged(let address):
            return ("Dirección cambiada en \(service)",
                    "La dirección de correo de su cuenta de \(service) se cambió a \(address). Los avisos irán allí desde ahora.\n\n\(notYou)")
        case .accountCreated:
            return ("Su cuenta de \(service)",
                    "Se creó una cuenta de \(service) para esta dirección.\n\nPara entrar, abra \(service), escriba esta dirección y pida un código por correo. Después añada una llave de acceso: con ella entrará en adelante.\nSi no la esperaba, ignore este mensaje.")
        case .emailSignIn(true):
            return ("Inicio de sesión por correo activado en \(service)",
                    "Los códigos enviados a esta dirección vuelven a iniciar sesión en su cuenta de \(service).\n\n\(notYou)")
        case .emailSignIn(false):
            return ("Inicio de sesión por correo desactivado en \(service)",
                    "Los códigos enviados a esta dirección ya no inician sesión en su cuenta de \(service): solo lo hacen sus llaves de acceso y sus códigos de recuperación. Guárdelos bien.\n\n\(notYou)")
        case .passkeyModelRefused(let count, let names, let model):
            let label = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
            let (passkeys, them) = count == 1 ? ("Su llave de acceso\(label) ya no sirve", "esta") : ("Sus llaves de acceso\(label) ya no sirven", "estas")
            return ("\(count == 1 ? "Una llave de acceso dejó" : "Unas llaves de acceso dejaron") de funcionar en \(service)",
                    "\(passkeys) para iniciar sesión en \(service): su modelo, \(model), fue declarado comprometido ante la FIDO Alliance.\n\nInicie sesión de otra forma (otra llave de acceso, un código enviado a esta dirección o un código de recuperación), añada una llave de acceso nueva y quite \(them) de su cuenta.")
        }
    }
}
