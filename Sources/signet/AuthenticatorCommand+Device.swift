import Foundation
import SignetAPI
import SignetClient
import SignetQR
import SignetWebAuthn

/// `signet authenticator device-signin | approve-device | deny-device`: a new device signed in by
/// an old one (RFC 8628), in two terminals.
extension AuthenticatorCommand {
    static let deviceCommands = ["device-signin", "approve-device", "deny-device"]

    static func runDevice(_ command: String, _ options: [String: String], _ positional: [String], _ client: SignetClient) async throws -> JSONValue? {
        switch command {
        case "device-signin":
            let signIn = try await client.startDeviceSignIn(scope: options["scope"] ?? OIDCScopes.text)
            // The code first, on a line of its own, so a script (or the other phone) can read it
            // while this one waits; the QR code of the link is for a person, on standard error.
            let started = JSONValue.object([
                "user_code": .string(signIn.userCode), "verification_uri": .string(signIn.verificationURI.absoluteString),
                "verification_uri_complete": .string(signIn.verificationURIComplete.absoluteString), "interval": .int(signIn.interval),
            ])
            FileHandle.standardOutput.write(Data((started.serialized + "\n").utf8))
            if let qr = QRCode(signIn.verificationURIComplete.absoluteString) {
                FileHandle.standardError.write(Data("\n\(qr.terminalText())\n\nOn a signed-in phone, approve code \(signIn.userCode)\n  (signet authenticator approve-device \(signIn.userCode) --state PHONE.json)\n\n".utf8))
            }
            let tokens = try await client.completeDeviceSignIn(signIn)
            return try await signedIn(client, tokens)
        case "approve-device", "deny-device":
            guard let code = positional.first else { throw SignetError(.invalidResponse, "\(command) needs the user code") }
            let request = command == "approve-device" ? try await client.approveDevice(userCode: code) : try await client.denyDevice(userCode: code)
            return .object(["ok": .bool(true), command == "approve-device" ? "approved" : "denied": .string(code),
                            "device_request": try request.map(encode) ?? .null])
        default:
            return nil
        }
    }
}
