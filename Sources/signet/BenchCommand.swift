import Foundation
import SignetCrypto
import SignetSoftware
import SignetWebAuthn

/// `signet bench verify`: verification throughput of the relying-party core next to its
/// physical floor, raw OpenSSL `EVP_DigestVerify` on the same key, measured in the same run.
enum BenchCommand {
    static func run(_ args: [String]) -> Int32 {
        if args.first == "login" { return LoginBenchmark.run(Array(args.dropFirst())) }
        if args.first == "soak" { return SoakCommand.run(Array(args.dropFirst())) }
        if args.first == "disk" { return DiskBenchmark.run(Array(args.dropFirst())) }
        if args.first == "cpu" { return CPUBenchmark.run(Array(args.dropFirst())) }
        if args.first == "breakdown" {
            // The in-process part of bench login alone (for profilers).
            guard let result = try? LoginBreakdown.measure(iterations: Int(args.dropFirst().first ?? "") ?? 5000) else { return 1 }
            print(JSONValue.object(["service_cpu_us_per_signin": .number(String(Int(result.serviceMicros))), "store_cpu_us_per_signin": .number(String(Int(result.storeMicros)))]).serialized)
            return 0
        }
        let usage = "usage: signet bench verify [--json] [--rounds N] | signet bench login [--url URL] [--concurrency N] [--duration S] [--json] | signet bench soak [--duration S] [--interval S] | signet bench disk [--seconds S] [--busy N] | signet bench cpu [--seconds S] [--threads N]"
        guard args.first == "verify" else {
            return usageError(usage, args.first.map { UsageProblem("no benchmark \"\($0)\"") } ?? UsageProblem("which benchmark?"))
        }
        var json = false
        var rounds = 7
        var words = CommandWords(args.dropFirst())
        do {
            while let flag = words.next() {
                switch flag {
                case "--json": json = true
                case "--rounds": rounds = try words.number(of: flag)
                default: throw UsageProblem.unexpected(flag)
                }
            }
            guard rounds > 0 else { throw UsageProblem("--rounds must be positive") }
        } catch {
            return usageError(usage, error)
        }
        return benchStatus("verify") {
            let report = try VerifyBenchmark(rounds: rounds).run()
            print(json ? report.json.serialized : report.text)
            return 0
        }
    }
}

/// Runs the benchmark `name`'s `body` for its exit status; a thrown error goes to standard error
/// as `bench NAME: …` with status 1.
func benchStatus(_ name: String, _ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch {
        FileHandle.standardError.write(Data("bench \(name): \(error)\n".utf8))
        return 1
    }
}

/// Times operations in rounds and reports the median rate.
struct Stopwatch {
    let rounds: Int
    /// Target length of one round.
    let roundSeconds = 0.25

    /// Median operations per second of `body`, which performs `n` operations per call.
    func rate(_ body: (Int) throws -> Void) rethrows -> Double {
        // Calibrate: grow n until one call takes a tenth of a round.
        var n = 16
        while true {
            let t = try time { try body(n) }
            if t > roundSeconds / 10 || n > 1 << 24 {
                n = max(1, Int(Double(n) * roundSeconds / max(t, 1e-9)))
                break
            }
            n *= 4
        }
        var rates: [Double] = []
        for _ in 0..<rounds { rates.append(Double(n) / (try time { try body(n) })) }
        return rates.sorted()[rates.count / 2]
    }

    func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

struct VerifyBenchmark {
    let rounds: Int
    let rpID = "bench.signet.test"
    let origin = "https://bench.signet.test"

    struct Fixture {
        let rp: RelyingParty
        let request: AuthenticationRequest
        let record: CredentialRecord
        let registration: RegistrationRequest
    }

    struct BenchError: Error, CustomStringConvertible { let description: String }

    /// One registered credential and one assertion for it, made by the software authenticator.
    func fixture(_ algorithm: COSEAlgorithm, attestation: String = "none") throws -> Fixture {
        var settings = SoftwareAuthenticator.Settings()
        settings.attestation = attestation
        let authenticator = SoftwareAuthenticator(settings: settings)
        var rp = RelyingParty(id: rpID, origins: [origin])
        rp.allowedAlgorithms = COSEAlgorithm.all
        let user = SecureRandom.bytes(32)
        let challenge = SecureRandom.bytes(32)
        let made = try authenticator.register(rpID: rpID, origin: origin, challenge: challenge, userHandle: user, userName: "bench", algorithm: algorithm)
        let registration = RegistrationRequest(clientDataJSON: made.clientDataJSON, attestationObject: made.attestationObject, expectedChallenge: challenge, requireUserVerification: true)
        let registered = try rp.verifyRegistration(registration, now: Date())
        let assertionChallenge = SecureRandom.bytes(32)
        let assertion = try authenticator.authenticate(rpID: rpID, origin: origin, challenge: assertionChallenge)
        let request = AuthenticationRequest(
            credentialID: assertion.credentialID, clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData,
            signature: assertion.signature, userHandle: assertion.userHandle, expectedChallenge: assertionChallenge, requireUserVerification: true)
        let record = CredentialRecord(id: registered.credentialID, publicKey: registered.publicKey, signCount: 0, backupEligible: registered.backupEligible, userHandle: user)
        return Fixture(rp: rp, request: request, record: record, registration: registration)
    }

    func assertions(_ f: Fixture, cold: Bool = false) throws -> (Int) throws -> Void {
        _ = try f.rp.verifyAuthentication(f.request, credential: f.record, userIdentified: false)
        return { n in
            for _ in 0..<n {
                if cold { f.rp.keyCache.removeAll() }
                _ = try f.rp.verifyAuthentication(f.request, credential: f.record, userIdentified: false)
            }
        }
    }

    func registrations(_ f: Fixture) -> (Int) throws -> Void {
        { n in for _ in 0..<n { _ = try f.rp.verifyRegistration(f.registration, now: Date()) } }
    }

    struct Report {
        var figures: [(key: String, label: String, perSecond: Double)] = []
        var ratio = 0.0

        var json: JSONValue {
            var object: JSONObject = ["ratio_warm_vs_raw": .number(String(format: "%.3f", ratio))]
            for f in figures {
                object[f.key + "_per_s"] = .number(String(format: "%.0f", f.perSecond))
                object[f.key + "_us"] = .number(String(format: "%.2f", 1e6 / f.perSecond))
            }
            return .object(object)
        }

        var text: String {
            var lines = ["signet bench verify: one thread, median of rounds", ""]
            lines.append("  " + "operation".padding(toLength: 52, withPad: " ", startingAt: 0) + "      per s      µs/op")
            for f in figures {
                lines.append("  " + f.label.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(format: "%11.0f %10.2f", f.perSecond, 1e6 / f.perSecond))
            }
            lines.append("")
            lines.append(String(format: "  ES256 assertion (warm) / raw EVP_DigestVerify: %.3f (target ≥ 0.90)", ratio))
            let perSecond = Dictionary(figures.map { ($0.key, $0.perSecond) }, uniquingKeysWith: { a, _ in a })
            if let raw = perSecond["openssl_raw"], let template = perSecond["openssl_template"] {
                lines.append(String(format: "  the floor with a template context / without: %.3f (%.2f µs saved a verification)", template / raw, 1e6 / raw - 1e6 / template))
            }
            lines.append("  OpenSSL template contexts in Signet's own code: " + (ProcessInfo.processInfo.environment["SIGNET_OPENSSL_TEMPLATES"] == "0" ? "off" : "on")
                + " (SIGNET_OPENSSL_TEMPLATES=0 turns them off)")
            return lines.joined(separator: "\n")
        }
    }

    func run() throws -> Report {
        let watch = Stopwatch(rounds: rounds)
        let es256 = try fixture(.es256)
        // The floor: the same signature over the same signed bytes, straight into OpenSSL.
        let key = try es256.rp.credentialKey(es256.record.publicKey).publicKey
        let signed = es256.request.authenticatorData + Digest.sha256.hash(es256.request.clientDataJSON)
        guard key.benchmarkRawVerify(signature: es256.request.signature, message: signed, scheme: .ecdsa(.sha256), iterations: 1) == 1 else {
            throw BenchError(description: "raw OpenSSL verification of the benchmark signature failed")
        }
        var report = Report()
        let raw = watch.rate { n in _ = key.benchmarkRawVerify(signature: es256.request.signature, message: signed, scheme: .ecdsa(.sha256), iterations: n) }
        let warm = try watch.rate(assertions(es256))
        let template = watch.rate { n in _ = key.benchmarkTemplateVerify(signature: es256.request.signature, message: signed, scheme: .ecdsa(.sha256), iterations: n) }
        report.figures.append(("openssl_raw", "raw OpenSSL EVP_DigestVerify, ES256 (floor)", raw))
        report.figures.append(("openssl_template", "the same, context copied from a template (floor)", template))
        report.figures.append(("es256_warm", "ES256 assertion, key cache warm", warm))
        let signer = try PrivateKey.generate(.ec(.p256))
        let token = Array(String(repeating: "x", count: 400).utf8)
        report.figures.append(("es256_sign", "ES256 signature of a 400-byte JWT (EVP_DigestSign)", try watch.rate { n in for _ in 0..<n { _ = try signer.sign(token, scheme: .ecdsa(.sha256)) } }))
        report.figures.append(("es256_sign_jws", "the same as a token's r || s (Signet's tokens)", try watch.rate { n in for _ in 0..<n { _ = try signer.signES256(token) } }))
        report.figures.append(("es256_cold", "ES256 assertion, key cache cold", try watch.rate(assertions(es256, cold: true))))
        report.figures.append(("eddsa_warm", "EdDSA (Ed25519) assertion, key cache warm", try watch.rate(assertions(fixture(.eddsa)))))
        report.figures.append(("rs256_warm", "RS256 (2048-bit) assertion, key cache warm", try watch.rate(assertions(fixture(.rs256)))))
        report.figures.append(("registration_none", "ES256 registration, none attestation", try watch.rate(registrations(es256))))
        report.figures.append(("registration_packed", "ES256 registration, packed self attestation", try watch.rate(registrations(fixture(.es256, attestation: "packed")))))
        report.ratio = warm / raw
        return report
    }
}
