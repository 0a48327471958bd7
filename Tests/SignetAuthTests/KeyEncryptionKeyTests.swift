import Foundation
import SignetAuth
import SignetTestSupport
import SignetWebAuthn
import Testing

/// `SIGNET_KEK` read from the environment: each way it can be wrong has its own words.
@Suite struct KeyEncryptionKeyTests {
    let key = (0..<32).map { UInt8($0) }

    @Test("SIGNET_KEK: the key, with whitespace around it as in the file; empty, not base64url or not 32 bytes refused, each saying which, and the file never read or made instead")
    func environment() throws {
        let file = Scratch.directory.appendingPathComponent("kek-\(UUID())").path
        let text = Base64URL.encode(key)
        #expect(try KeyEncryptionKey.load(environment: ["SIGNET_KEK": text], file: file) == key)
        #expect(try KeyEncryptionKey.load(environment: ["SIGNET_KEK": " \(text)\n"], file: file) == key)
        let refusals = [
            ("", "SIGNET_KEK is set but empty: give the key (signet keys kek makes one), or unset it to use \(file)"),
            ("  \n", "SIGNET_KEK is set but empty"),
            (text + "!", "SIGNET_KEK is not base64url"),
            (Base64URL.encode(Array(key.prefix(31))), "SIGNET_KEK holds 31 bytes; a key-encryption key is 32"),
            (Base64URL.encode(key + [0]), "SIGNET_KEK holds 33 bytes"),
        ]
        for (value, words) in refusals {
            #expect { _ = try KeyEncryptionKey.load(environment: ["SIGNET_KEK": value], file: file) } throws: { "\($0)".hasPrefix(words) }
        }
        #expect(!FileManager.default.fileExists(atPath: file))
        // The new key of a re-key is named as such.
        #expect { _ = try KeyEncryptionKey.fromEnvironment("", variable: "SIGNET_NEW_KEK", fallback: "--new-kek-file") } throws: {
            "\($0)" == "SIGNET_NEW_KEK is set but empty: give the key (signet keys kek makes one), or unset it to use --new-kek-file"
        }
    }
}
