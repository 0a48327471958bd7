import Foundation
import SignetAPI
import SignetClient
import SignetSoftware
import Testing

/// The SDK's email-code, recovery-code and recovery calls against `signet serve` in development
/// mode, which writes its mail to `./signet-mail/` (the test reads the codes there).
@Suite struct SDKEmailTests {
    /// The code in the newest `.eml` to `address` in the server's mail folder.
    static func code(_ server: ServerProcess, to address: String, after count: Int = 0, kind: String = "otp") async throws -> String {
        let folder = server.directory.appendingPathComponent("signet-mail")
        for _ in 0..<200 {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
            let texts = names.compactMap { try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
                .filter { $0.contains("X-Signet-Kind: \(kind)\r\n") && $0.contains("To: <\(address)>") }
            if texts.count > count, let body = texts.last?.components(separatedBy: "\r\n\r\n").dropFirst().joined(),
               let code = body.split(whereSeparator: { !$0.isNumber }).first(where: { $0.count == 6 }) {
                return String(code)
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw SignetError(.invalidResponse, "no code mail for \(address)")
    }

    /// A sign-in by email code: the code mailed, read from the server's folder, and sent back.
    static func signIn(_ client: SignetClient, _ server: ServerProcess, email: String) async throws {
        try await client.startEmailSignIn(email: email)
        try await client.signIn(email: email, code: try await code(server, to: email))
    }

    /// A provider with the system sheet only: no conditional registration (the protocol's default).
    struct SheetOnly: PasskeyProvider {
        let base: SoftwarePasskeyProvider
        func createPasskey(_ options: CreationOptionsJSON) async throws -> CredentialJSON { try await base.createPasskey(options) }
        func assertPasskey(_ options: RequestOptionsJSON) async throws -> CredentialJSON { try await base.assertPasskey(options) }
    }

    @Test("upgradeToPasskey(): after a code sign-in a passkey is made without a sheet (no user presence, as iOS 18 makes it) and signs in; none again on that device, none from a provider without it, none (and no step-up) for an old sign-in")
    func passkeyUpgrade() async throws {
        let server = try ServerProcess()
        let app = try App(server)
        try await Self.signIn(app.client, server, email: "upgrade@signet.test")
        let added = try #require(try await app.client.upgradeToPasskey())
        #expect(try await app.client.passkeys().map(\.id) == [added.id])
        // The device has one for the account: none again, and no error.
        #expect(try await app.client.upgradeToPasskey() == nil)
        #expect(try await app.client.passkeys().count == 1)
        // It signs in.
        try await App(server, authenticator: app.passkeys.authenticator).client.signIn()
        // A provider that cannot register without a sheet makes none.
        let sheetOnly = server.client(SheetOnly(base: SoftwarePasskeyProvider(authenticator: SoftwareAuthenticator(), origin: server.origin)), tokens: "sheet-only")
        try await Self.signIn(sheetOnly, server, email: "sheet@signet.test")
        #expect(try await sheetOnly.upgradeToPasskey() == nil)
        #expect(try await sheetOnly.passkeys().isEmpty)
        // A sign-in older than step_up.max_age: none, without a passkey sheet for a step-up
        // (which this account, with no passkey, could not pass: it would throw).
        let strict = try ServerProcess(environment: ["SIGNET_STEP_UP_MAX_AGE": "1"])
        let late = try App(strict)
        try await Self.signIn(late.client, strict, email: "late@signet.test")
        try await Task.sleep(nanoseconds: 2_100_000_000)
        #expect(try await late.client.upgradeToPasskey() == nil)
        #expect(try await late.client.passkeys().isEmpty && late.passkeys.authenticator.credentials.isEmpty)
    }

    @Test("startEmailChange + confirmEmailChange: the account moves to the address the code went to")
    func emailChange() async throws {
        let server = try ServerProcess()
        let app = try App(server)
        try await app.client.signUp(email: "before@signet.test")
        let started = try await app.client.startEmailChange(to: "after@signet.test")
        #expect(started.email == "after@signet.test" && !started.email_verified && started.expires_in == 300)
        await #expect(throws: SignetError(.otpInvalid, "")) { try await app.client.confirmEmailChange(email: "after@signet.test", code: "000000") }
        let code = try await Self.code(server, to: "after@signet.test", kind: "email_change_code")
        let done = try await app.client.confirmEmailChange(email: "after@signet.test", code: code)
        #expect(done.email == "after@signet.test" && done.email_verified)
        try await app.client.refresh()
        #expect(try await app.client.userInfo().email == "after@signet.test")
        // The name, set and cleared.
        #expect(try await app.client.setName("Grace").name == "Grace")
        #expect(try await app.client.setName(nil).name == nil)
    }

    @Test("email code sign-up, a passkey added, recovery codes (stepping up by itself), a recovery-code sign-in, a recovery held and cancelled")
    func flows() async throws {
        let server = try ServerProcess()
        let app = try App(server)
        try await app.client.startEmailSignIn(email: "mail@signet.test")
        try await app.client.signIn(email: "mail@signet.test", code: try await Self.code(server, to: "mail@signet.test"))
        await #expect(throws: SignetError(.otpInvalid, "")) { try await app.client.signIn(email: "mail@signet.test", code: "000000") }
        // No credential yet: adding one opens no recovery.
        try await app.client.addPasskey(name: "Phone")
        #expect(try await app.client.recovery() == nil)
        let codes = try await app.client.createRecoveryCodes()
        let status = try await app.client.recoveryCodesStatus()
        #expect(codes.count == 10 && status.remaining == 10)
        // Another device with only a recovery code: it adds its passkey under a hold.
        let other = try App(server)
        try await other.client.signIn(email: "mail@signet.test", recoveryCode: codes[0])
        await #expect(throws: SignetError(.recoveryCodeInvalid, "")) { try await other.client.signIn(email: "mail@signet.test", recoveryCode: codes[0]) }
        try await other.client.addPasskey(name: "Stranger")
        let recovery = try #require(try await other.client.recovery())
        #expect(recovery.passkeys.count == 1 && recovery.hold_until - recovery.opened_at == 86400)
        await #expect(throws: SignetError(.recoveryHold, "")) { try await other.client.cancelRecovery() }
        // The first phone, signed in with its older passkey, cancels it.
        try await app.client.signIn()
        try await app.client.cancelRecovery()
        #expect(try await app.client.recovery() == nil)
        #expect(try await app.client.passkeys().map(\.name) == ["Phone"])
    }
}
