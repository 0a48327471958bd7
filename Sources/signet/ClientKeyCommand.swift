import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn

/// `signet client-key new|assertion`: a machine client's key pair for `private_key_jwt` (OIDC
/// Core §9), and the assertions it sends instead of a secret, for scripts and `curl`. A client
/// in production signs with its own library and keeps its key in its own secret store.
enum ClientKeyCommand {
    static let usage = """
        usage: signet client-key new [--alg ES256|EdDSA|PS256|RS256] [--kid KID] --out KEY.pem
                 writes the private key to KEY.pem (mode 0600) and prints the public JWK Set to register
                 (signet admin clients add --jwks FILE, or "jwks" in signet.json)
               signet client-key assertion --key KEY.pem --client-id ID --audience URL [--alg PS256|RS256] [--kid KID] [--lifetime SECONDS]
                 prints one client assertion (at most 3600 seconds; each is accepted once)

        """

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func run(_ args: [String]) -> Int32 {
        var values: [String: String] = [:]
        let taken = ["new": ["--alg", "--kid", "--out"], "assertion": ["--key", "--client-id", "--audience", "--alg", "--kid", "--lifetime"]]
        do {
            guard let command = args.first, let options = taken[command] else {
                throw UsageProblem(args.first.map { "new or assertion, not \"\($0)\"" } ?? "new or assertion?")
            }
            var words = CommandWords(args.dropFirst())
            while let word = words.next() {
                guard options.contains(word) else { throw UsageProblem.unexpected(word) }
                values[word] = try words.value(of: word)
            }
            let required = command == "new" ? ["--out"] : ["--key", "--client-id", "--audience"]
            if let missing = required.first(where: { values[$0] == nil }) { throw UsageProblem.missing(missing) }
        } catch {
            return usageError(usage, error)
        }
        do {
            switch args.first {
            case "new": return try new(values)
            case "assertion": return try assertion(values)
            default: return usageError(usage)
            }
        } catch {
            FileHandle.standardError.write(Data("signet client-key: \(error)\n".utf8))
            return 1
        }
    }

    static func new(_ values: [String: String]) throws -> Int32 {
        guard let out = values["--out"] else { return usageError(usage) }
        let key = try SoftwareClientKey(algorithm: values["--alg"] ?? "ES256", kid: values["--kid"])
        // Readable by its owner only from its first byte (SecretFile), and never over an existing key.
        guard !FileManager.default.fileExists(atPath: out) else { throw Failure("\(out) exists; it is not overwritten") }
        try SecretFile.save(Data(key.privateKeyPEM.utf8), to: out)
        print(key.jwks.serialized)
        return 0
    }

    static func assertion(_ values: [String: String]) throws -> Int32 {
        guard let path = values["--key"], let clientID = values["--client-id"], let audience = values["--audience"] else { return usageError(usage) }
        guard let text = (try? BoundedFile.read(path, limit: 64 << 10)).map({ String(decoding: $0, as: UTF8.self) }), let der = pemBody(text) else {
            throw Failure("\(path) is not a PEM private key")
        }
        let lifetime = Int64(values["--lifetime"] ?? "60") ?? 0
        guard (1...3600).contains(lifetime) else { throw Failure("--lifetime must be 1 to 3600 seconds") }
        let probe = try PrivateKey(der: der).publicKey
        let algorithm = probe.x963 != nil ? "ES256" : probe.rawEdwards != nil ? "EdDSA" : (values["--alg"] ?? "PS256")
        let key = try SoftwareClientKey(privateKeyDER: der, algorithm: algorithm, kid: values["--kid"] ?? "")
        // Without --kid the header names no key, and Signet tries each registered key of the type.
        print(try key.assertion(clientID: clientID, audience: audience, lifetime: lifetime))
        return 0
    }

    /// The DER inside a PEM block (RFC 7468 §2).
    static func pemBody(_ text: String) -> [UInt8]? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("PRIVATE KEY-----") }),
              let end = lines[begin...].firstIndex(where: { $0.hasPrefix("-----END ") }) else { return nil }
        return Data(base64Encoded: lines[(begin + 1)..<end].joined()).map { [UInt8]($0) }
    }
}
