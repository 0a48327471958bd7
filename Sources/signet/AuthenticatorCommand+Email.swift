import Foundation
import SignetAPI
import SignetAuth
import SignetClient
import SignetWebAuthn

/// `signet authenticator email-start|email-signin|add-passkey|recovery-codes|recover|recovery|cancel-recovery|change-email|confirm-email`.
extension AuthenticatorCommand {
    static let emailCommands = ["email-start", "email-signin", "add-passkey", "recovery-codes", "recover", "recovery", "cancel-recovery",
                                "change-email", "confirm-email"]

    /// The answer of an email or recovery command; `nil` for any other command.
    static func runEmail(_ command: String, _ options: [String: String], _ client: SignetClient) async throws -> JSONValue? {
        func email() throws -> String {
            guard let email = options["email"] else { throw SignetError(.invalidResponse, "\(command) needs --email") }
            return email
        }
        switch command {
        case "email-start":
            let started = try await client.startEmailSignIn(email: try email())
            return .object(["ok": .bool(true), "email": .string(started.email)])
        case "email-signin":
            let address = try email()
            let code = try options["code"] ?? newestCode(to: address, in: options["mail-dir"] ?? "signet-mail")
            return try await signedIn(client, try await client.signIn(email: address, code: code))
        case "add-passkey":
            return .object(["ok": .bool(true), "passkey": try encode(try await client.addPasskey(name: options["name"]))])
        case "recovery-codes":
            return .object(["ok": .bool(true), "codes": .array(try await client.createRecoveryCodes().map(JSONValue.string))])
        case "recover":
            guard let code = options["recovery-code"] else { throw SignetError(.invalidResponse, "recover needs --recovery-code") }
            return try await signedIn(client, try await client.signIn(email: try email(), recoveryCode: code))
        case "recovery":
            return .object(["ok": .bool(true), "recovery": try await client.recovery().map { try encode($0) } ?? .null])
        case "cancel-recovery":
            try await client.cancelRecovery()
            return .object(["ok": .bool(true)])
        case "change-email":
            return .object(["ok": .bool(true), "change": try encode(try await client.startEmailChange(to: try email()))])
        case "confirm-email":
            let address = try email()
            let code = try options["code"] ?? newestCode(to: address, in: options["mail-dir"] ?? "signet-mail", kind: "email_change_code")
            return .object(["ok": .bool(true), "change": try encode(try await client.confirmEmailChange(email: address, code: code))])
        default:
            return nil
        }
    }

    /// The code in the newest sign-in message to `address` among a development server's `.eml`
    /// files (the file names start with the time they were queued). The server's mail sender
    /// writes a message after the request that queued it is answered, so a command run straight
    /// after that request waits for it, up to `wait` seconds.
    static func newestCode(to address: String, in directory: String, kind: String = "otp", wait: Double = 15) throws -> String {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            if let code = codeInFolder(to: address, in: directory, kind: kind) { return code }
            guard Date() < deadline else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw SignetError(.invalidResponse, "no code for \(address) in \(directory)/ (give it with --code)")
    }

    /// The code of the newest message of `kind` to `address` in `directory`, if one is there.
    static func codeInFolder(to address: String, in directory: String, kind: String) -> String? {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
        for name in names.reversed() {
            guard let text = try? String(contentsOfFile: (directory as NSString).appendingPathComponent(name), encoding: .utf8) else { continue }
            let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
            guard head.contains("X-Signet-Kind: \(kind)\r\n") || head.hasSuffix("X-Signet-Kind: \(kind)"), head.lowercased().contains("to: <\(MailMessage.asciiAddress(address.lowercased()))>") else { continue }
            let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n").replacingOccurrences(of: "=\r\n", with: "")
            if let code = body.split(whereSeparator: { !$0.isNumber }).first(where: { (6...10).contains($0.count) }) { return String(code) }
        }
        return nil
    }
}
