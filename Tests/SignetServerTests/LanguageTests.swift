import Foundation
import SignetAPI
import SignetAuth
import SignetHTTP
import SignetServer
import SignetTestSupport
import SignetWeb
import SignetWebAuthn
import Testing

/// The languages the pages and the messages speak (English, Spanish, French, German): every text in
/// each, chosen by `ui_locales` then `Accept-Language`, and the messages' headers as a mail
/// reader (Python's `email` package) decodes them.
@Suite struct LanguageTests {
    @Test("every language has every text, the same refusals worded, and is chosen by ui_locales, then Accept-Language, by primary tag")
    func tables() {
        #expect(Strings.languages == ["en", "es", "fr", "de"] && Notice.languages == Strings.languages)
        for language in Strings.languages {
            #expect(Set(Strings.table(language).keys) == Set(Strings.table("en").keys), "\(language)")
            #expect(Strings.names[language] != nil)
        }
        // English words only the refusals whose own words are for developers (the rest keep
        // the errors' own words); the others word the same reasons.
        let developers: Set<Reason> = [.clientUnknown, .redirectURIInvalid, .malformed, .notFound]
        for reason in Reason.allCases {
            #expect((Strings.refusal(reason, language: "en") != nil) == developers.contains(reason), "\(reason)")
            #expect(Strings.refusal(reason, language: "en") != reason.text, "\(reason)")
            for language in Strings.languages.dropFirst(2) {
                #expect((Strings.refusal(reason, language: "es") != nil) == (Strings.refusal(reason, language: language) != nil), "\(language) \(reason)")
            }
        }
        #expect(Strings.language(uiLocales: "fr-CA", acceptLanguage: "es") == "fr")
        #expect(Strings.language(uiLocales: "it", acceptLanguage: "it-CH, fr;q=0.7, en;q=0.5") == "fr")
        #expect(Strings.language(uiLocales: "de-CH", acceptLanguage: "fr") == "de" && Notice.language(acceptLanguage: "de-AT,de;q=0.9,en;q=0.8") == "de")
        #expect(Strings.language(uiLocales: nil, acceptLanguage: "fr;q=0, es;q=0.1") == "es")
        #expect(Notice.language(acceptLanguage: "fr-BE,fr;q=0.9,en;q=0.8") == "fr")
        // French puts a no-break space before its high punctuation, never a plain one that could wrap.
        for (key, text) in Strings.table("fr") {
            #expect(text.range(of: #" [:;?!]"#, options: .regularExpression) == nil, "\(key): \(text)")
        }
        for notice in [Notice.code("123456", minutes: 10), .recoveryCodeUsed(remaining: 3), .emailSignIn(enabled: false), .passkeyRemoved(name: "Clé", byOperator: true)] {
            let text = notice.text(language: "fr", service: "Signet")
            #expect((text.subject + text.body).range(of: #" [:;?!]"#, options: .regularExpression) == nil, "\(notice.kind)")
        }
    }

    @Test("a French browser gets French pages: the language, the title, the links to the others (this one marked), a refusal in its words; discovery lists all three")
    func frenchPages() throws {
        let server = try WebPageTests.server()
        let browser = WebBrowser(server)
        let login = try browser.send("GET", "/login?return_to=%2Faccount", headers: [("Accept", "text/html"), ("Accept-Language", "fr-CA, fr;q=0.9, en;q=0.5")])
        let html = String(decoding: login.body, as: UTF8.self)
        #expect(login.status == 200 && html.contains(#"<html lang="fr""#) && html.contains("<title>Connexion"), "\(html.prefix(400))")
        #expect(html.contains("Se connecter avec une clé d’accès") && html.contains("Pas encore de compte\u{00A0}?"))
        // One link a language, keeping the page's query, the page's own marked as current.
        for (code, name) in [("en", "English"), ("es", "Español"), ("fr", "Français"), ("de", "Deutsch")] {
            let current = code == "fr" ? #" aria-current="true""# : ""
            #expect(html.contains(#"<a href="/login?return_to=%2Faccount&amp;ui_locales=\#(code)" lang="\#(code)" hreflang="\#(code)"\#(current)>\#(name)</a>"#), "\(code)")
        }
        // ui_locales wins over the browser's languages.
        let spanish = String(decoding: try browser.send("GET", "/login?ui_locales=es", headers: [("Accept", "text/html"), ("Accept-Language", "fr")]).body, as: UTF8.self)
        #expect(spanish.contains(#"<html lang="es""#) && spanish.contains(#"hreflang="es" aria-current="true""#))
        // A refusal on a page, in French.
        let refused = try browser.send("GET", "/authorize?client_id=nobody&ui_locales=fr", headers: [("Accept", "text/html")])
        let error = String(decoding: refused.body, as: UTF8.self)
        #expect(refused.status == 401 && error.contains("Cette application est inconnue.") && error.contains("Un problème est survenu"), "\(refused.status) \(error)")
        let discovery = try StrictJSON().parse(try server.get("/.well-known/openid-configuration").body)
        #expect(discovery["ui_locales_supported"] == .array([.string("en"), .string("es"), .string("fr"), .string("de")]))
    }

    @Test("a German browser gets German pages and a refusal in German words; every German text is translated, and its messages are German")
    func germanPages() throws {
        // Only words German shares with English stay the same.
        let shared: Set = ["name", "name_title", "code", "device_code", "passkeys", "unknown_provider", "browser", "app", "device_app"]
        for (key, text) in Strings.table("de") where !shared.contains(key) {
            #expect(text != Strings.table("en")[key], "\(key) is not translated")
        }
        let server = try WebPageTests.server()
        let browser = WebBrowser(server)
        let login = try browser.send("GET", "/login", headers: [("Accept", "text/html"), ("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")])
        let html = String(decoding: login.body, as: UTF8.self)
        #expect(login.status == 200 && html.contains(#"<html lang="de""#) && html.contains("<title>Anmelden"), "\(html.prefix(400))")
        #expect(html.contains("Mit einem Passkey anmelden") && html.contains("Noch kein Konto?") && html.contains(#"hreflang="de" aria-current="true">Deutsch</a>"#))
        let refused = try browser.send("GET", "/authorize?client_id=nobody&ui_locales=de", headers: [("Accept", "text/html")])
        let error = String(decoding: refused.body, as: UTF8.self)
        #expect(refused.status == 401 && error.contains("Diese App ist unbekannt.") && error.contains("Etwas ist schiefgelaufen"), "\(refused.status) \(error)")
        let code = Notice.code("123456", minutes: 10).text(language: "de", service: "Signet")
        #expect(code.subject == "Ihr Code für Signet: 123456" && code.body.contains("Er läuft in 10 Minuten ab und gilt nur einmal."))
        let refusedModel = Notice.passkeyModelRefused(count: 2, names: ["Laptop", "Phone"], model: "Key 5").text(language: "de", service: "Signet")
        #expect(refusedModel.subject == "Passkeys funktionieren nicht mehr bei Signet" && refusedModel.body.hasPrefix("Ihre Passkeys (Laptop, Phone) melden Sie nicht mehr bei Signet an: Ihr Modell, Key 5,"))
    }

    @Test("a French sign-in code: in French, the account's language kept, the subject and the sender's name whole as a mail reader decodes them",
          .enabled(if: SMTPServer.available, "needs python3-aiosmtpd (scripts/bootstrap.sh installs it)"))
    func frenchMessage() throws {
        let smtp = try SMTPServer()
        // Under 42 bytes, so the sender's name is one encoded word (Python's parser puts a space
        // between a name's words, RFC 2047 §6.2 none); the subject is two.
        let service = "Société Générale — accès"
        let server = try TestServer(smtp: smtp) { c in c.rpName = service }
        #expect(try server.startEmail("claire@signet.test", headers: [("Accept-Language", "fr-FR,fr;q=0.9,en;q=0.5")]).status == 200)
        let code = try smtp.code(for: "claire@signet.test")
        let message = try #require(smtp.messages(to: "claire@signet.test").last)
        #expect(message.headers["content-language"] == "fr" && message.body.contains("Votre code pour vous connecter à \(service)\u{00A0}:\n\n    \(code)"))
        // The header lines are folded words, none over 78 characters.
        let raw = message.raw.replacingOccurrences(of: "\r\n", with: "\n")
        let header = raw.components(separatedBy: "\n\n")[0]
        #expect(header.split(separator: "\n").allSatisfy { $0.utf8.count <= 78 }, "\(header)")
        // Python's email package (RFC 2047 §6.2: the words joined) reads back the subject and the name.
        let file = Scratch.path("french", ".eml")
        try Data(message.raw.utf8).write(to: URL(fileURLWithPath: file))
        let read = try runProcess(SMTPServer.python, ["-c", """
            import email, json, sys
            from email import policy
            m = email.message_from_binary_file(open(sys.argv[1], "rb"), policy=policy.default)
            print(json.dumps({"subject": str(m["subject"]), "name": m["from"].addresses[0].display_name, "body": m.get_content()}))
            """, file])
        let decoded = try StrictJSON().parse(Array(read.output.utf8))
        #expect(read.status == 0 && decoded["subject"] == .string("Votre code \(service)\u{00A0}: \(code)"), "\(read.output)\(read.errors)")
        #expect(decoded["name"] == .string(service))
        #expect(decoded["body"]?.string?.contains("Il expire dans") == true)
        #expect(try server.signIn(email: "claire@signet.test", code: code, headers: [("Accept-Language", "fr")]).status == 200)
        #expect(try server.store.user(email: "claire@signet.test")?.locale == "fr")
    }
}
