import SignetAPI

/// The hosted pages' text in each language they speak (DESIGN.md, "The web": English and
/// Spanish). Every key exists in both; a test checks it.
public enum Strings {
    public static let languages = ["en", "es"]

    /// The first of `uiLocales` (OIDC Core §3.1.2.1, space-separated BCP 47 tags), then of
    /// `Accept-Language` (RFC 9110 §12.5.4, in order of weight), that the pages speak; else English.
    public static func language(uiLocales: String?, acceptLanguage: String?) -> String {
        for tag in (uiLocales ?? "").split(separator: " ") {
            let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
            if languages.contains(primary) { return primary }
        }
        return AcceptLanguage.preferred(acceptLanguage, among: languages) ?? "en"
    }

    public static func table(_ language: String) -> [String: String] { language == "es" ? es : en }

    static let en: [String: String] = [
        "signin_title": "Sign in", "signup_title": "Create your account", "email": "Email", "name": "Name (optional)",
        "signin_passkey": "Sign in with a passkey", "send_code": "Email me a code", "or": "or",
        "no_account": "No account yet?", "create_account": "Create one", "have_account": "Already have an account?", "signin": "Sign in",
        "signup_submit": "Create account with a passkey", "signup_code": "Create account with an email code",
        "code_title": "Check your email", "code_sent": "We sent a code to", "code": "Code", "verify": "Verify and sign in", "resend": "Send a new code",
        "offer_title": "Sign in faster next time", "offer_text": "Create a passkey on this device: next time you sign in with your fingerprint, face or screen lock, with no code to wait for.",
        "create_passkey": "Create a passkey", "not_now": "Not now", "offer_done": "Passkey created.",
        "account_title": "Your account", "passkeys": "Passkeys", "add_passkey": "Add a passkey", "no_passkeys": "No passkeys yet.",
        "rename": "Rename", "rename_label": "New name", "revoke": "Remove", "created": "created", "last_used": "last used", "never": "never",
        "synced": "synced", "device_bound": "this device only", "unknown_provider": "Passkey",
        "device_keys": "Device keys", "no_device_keys": "No device keys.", "sessions": "Where you're signed in", "this_device": "this browser",
        "browser": "Browser", "app": "App", "last_seen": "last seen", "events": "Recent security events", "no_events": "No events yet.",
        "recovery_codes": "Recovery codes", "recovery_none": "You have no recovery codes.", "recovery_left": "unused recovery codes left.",
        "recovery_generate": "Create new recovery codes", "recovery_shown_once": "Keep these codes somewhere safe. They are shown only this once.",
        "recovery_open": "A recovery of this account is on hold until", "recovery_cancel": "Cancel the recovery", "signout": "Sign out",
        "stepup_text": "For your security, confirm it's you with a passkey before making this change.", "stepup_button": "Confirm with a passkey",
        "error_title": "Something went wrong", "back": "Back to sign-in", "device_title": "Approve a sign-in on another device",
        "device_text": "Enter the code shown on the other device.", "device_code": "Code", "device_approve": "Approve", "device_deny": "Deny",
        "device_continue": "Continue", "device_review": "A device asks to sign in to your account. Approve only if you started this sign-in yourself and that device shows this code.",
        "device_app": "App", "device_device": "Device", "device_address": "Address", "device_asked": "Asked at", "device_unnamed": "Not given", "device_account": "Go to your account",
        "device_done": "Done: the other device is signed in.", "device_denied": "Denied: the other device is not signed in.",
        "msg_no_passkey": "No passkey was used. You can sign in with an email code instead.",
        "msg_unsupported": "This browser cannot use passkeys here. Use an email code instead.",
        "msg_failed": "That didn't work. Try again, or use an email code.", "msg_working": "Waiting for your passkey…",
        "notice_renamed": "Passkey renamed.", "notice_revoked": "Passkey removed.", "notice_session_revoked": "Session ended.",
        "notice_device_key_revoked": "Device key removed.", "notice_recovery_cancelled": "Recovery cancelled.", "notice_added": "Passkey added.",
        "language": "Language", "failed": "refused",
        "signout_title": "Sign out?", "signout_text": "You are about to sign out in this browser.", "stay": "Stay signed in",
        "event_sign_in": "Signed in with a passkey",
        "event_sign_up": "Account created",
        "event_step_up": "Confirmed with a passkey",
        "event_otp_sign_in": "Signed in with an email code",
        "event_otp_sign_up": "Account created with an email code",
        "event_recovery_code_sign_in": "Signed in with a recovery code",
        "event_passkey_added": "Passkey added",
        "event_passkey_revoked": "Passkey removed",
        "event_device_key_enrolled": "Device key added",
        "event_device_key_revoked": "Device key removed",
        "event_session_revoked": "Session ended",
        "event_sign_out": "Signed out",
        "event_refresh_token_reused": "A stolen session token was used: the session was ended",
        "event_possible_cloned_authenticator": "A passkey may have been copied",
        "event_recovery_opened": "Account recovery started",
        "event_recovery_cancelled": "Account recovery cancelled",
        "event_recovery_finished": "Account recovery finished",
        "event_recovery_codes_created": "New recovery codes",
        "event_device_approved": "Another device's sign-in approved",
        "event_device_denied": "Another device's sign-in denied",
        "event_device_sign_in": "Signed in on a new device",
        "event_admin_sessions_revoked": "An administrator ended your sessions",
        "event_admin_passkey_revoked": "An administrator removed a passkey",
        "event_action_approved": "Action approved",
    ]

    static let es: [String: String] = [
        "signin_title": "Iniciar sesión", "signup_title": "Crea tu cuenta", "email": "Correo electrónico", "name": "Nombre (opcional)",
        "signin_passkey": "Iniciar sesión con una llave de acceso", "send_code": "Enviarme un código por correo", "or": "o",
        "no_account": "¿Aún no tienes cuenta?", "create_account": "Crear una", "have_account": "¿Ya tienes cuenta?", "signin": "Iniciar sesión",
        "signup_submit": "Crear cuenta con una llave de acceso", "signup_code": "Crear cuenta con un código por correo",
        "code_title": "Revisa tu correo", "code_sent": "Enviamos un código a", "code": "Código", "verify": "Verificar e iniciar sesión", "resend": "Enviar un código nuevo",
        "offer_title": "Inicia sesión más rápido la próxima vez", "offer_text": "Crea una llave de acceso en este dispositivo: la próxima vez entrarás con tu huella, tu cara o el bloqueo de pantalla, sin esperar ningún código.",
        "create_passkey": "Crear una llave de acceso", "not_now": "Ahora no", "offer_done": "Llave de acceso creada.",
        "account_title": "Tu cuenta", "passkeys": "Llaves de acceso", "add_passkey": "Añadir una llave de acceso", "no_passkeys": "Aún no tienes llaves de acceso.",
        "rename": "Renombrar", "rename_label": "Nombre nuevo", "revoke": "Quitar", "created": "creada", "last_used": "último uso", "never": "nunca",
        "synced": "sincronizada", "device_bound": "solo este dispositivo", "unknown_provider": "Llave de acceso",
        "device_keys": "Claves de dispositivo", "no_device_keys": "No hay claves de dispositivo.", "sessions": "Dónde has iniciado sesión", "this_device": "este navegador",
        "browser": "Navegador", "app": "App", "last_seen": "visto por última vez", "events": "Eventos de seguridad recientes", "no_events": "Aún no hay eventos.",
        "recovery_codes": "Códigos de recuperación", "recovery_none": "No tienes códigos de recuperación.", "recovery_left": "códigos de recuperación sin usar.",
        "recovery_generate": "Crear códigos de recuperación nuevos", "recovery_shown_once": "Guarda estos códigos en un lugar seguro. Solo se muestran esta vez.",
        "recovery_open": "Hay una recuperación de esta cuenta en espera hasta", "recovery_cancel": "Cancelar la recuperación", "signout": "Cerrar sesión",
        "stepup_text": "Por tu seguridad, confirma que eres tú con una llave de acceso antes de hacer este cambio.", "stepup_button": "Confirmar con una llave de acceso",
        "error_title": "Algo salió mal", "back": "Volver a iniciar sesión", "device_title": "Aprobar un inicio de sesión en otro dispositivo",
        "device_text": "Escribe el código que muestra el otro dispositivo.", "device_code": "Código", "device_approve": "Aprobar", "device_deny": "Rechazar",
        "device_continue": "Continuar", "device_review": "Un dispositivo pide iniciar sesión en tu cuenta. Apruébalo solo si tú mismo iniciaste este inicio de sesión y ese dispositivo muestra este código.",
        "device_app": "Aplicación", "device_device": "Dispositivo", "device_address": "Dirección", "device_asked": "Solicitado", "device_unnamed": "No indicado", "device_account": "Ir a tu cuenta",
        "device_done": "Listo: el otro dispositivo ha iniciado sesión.", "device_denied": "Rechazado: el otro dispositivo no ha iniciado sesión.",
        "msg_no_passkey": "No se usó ninguna llave de acceso. Puedes entrar con un código por correo.",
        "msg_unsupported": "Este navegador no puede usar llaves de acceso aquí. Usa un código por correo.",
        "msg_failed": "No funcionó. Inténtalo de nuevo o usa un código por correo.", "msg_working": "Esperando tu llave de acceso…",
        "notice_renamed": "Llave de acceso renombrada.", "notice_revoked": "Llave de acceso quitada.", "notice_session_revoked": "Sesión cerrada.",
        "notice_device_key_revoked": "Clave de dispositivo quitada.", "notice_recovery_cancelled": "Recuperación cancelada.", "notice_added": "Llave de acceso añadida.",
        "language": "Idioma", "failed": "rechazado",
        "signout_title": "¿Cerrar sesión?", "signout_text": "Vas a cerrar la sesión en este navegador.", "stay": "Seguir con la sesión",
        "event_sign_in": "Inicio de sesión con llave de acceso",
        "event_sign_up": "Cuenta creada",
        "event_step_up": "Confirmado con llave de acceso",
        "event_otp_sign_in": "Inicio de sesión con código por correo",
        "event_otp_sign_up": "Cuenta creada con código por correo",
        "event_recovery_code_sign_in": "Inicio de sesión con código de recuperación",
        "event_passkey_added": "Llave de acceso añadida",
        "event_passkey_revoked": "Llave de acceso quitada",
        "event_device_key_enrolled": "Clave de dispositivo añadida",
        "event_device_key_revoked": "Clave de dispositivo quitada",
        "event_session_revoked": "Sesión cerrada",
        "event_sign_out": "Sesión cerrada por ti",
        "event_refresh_token_reused": "Se usó un token de sesión robado: la sesión se cerró",
        "event_possible_cloned_authenticator": "Puede que se haya copiado una llave de acceso",
        "event_recovery_opened": "Recuperación de cuenta iniciada",
        "event_recovery_cancelled": "Recuperación de cuenta cancelada",
        "event_recovery_finished": "Recuperación de cuenta terminada",
        "event_recovery_codes_created": "Códigos de recuperación nuevos",
        "event_device_approved": "Inicio de sesión de otro dispositivo aprobado",
        "event_device_denied": "Inicio de sesión de otro dispositivo rechazado",
        "event_device_sign_in": "Inicio de sesión en un dispositivo nuevo",
        "event_admin_sessions_revoked": "Un administrador cerró tus sesiones",
        "event_admin_passkey_revoked": "Un administrador quitó una llave de acceso",
        "event_action_approved": "Acción aprobada",
    ]
}
