import Foundation
import SignetAuth
import SignetCrypto
import SignetSoftware
import SignetWebAuthn
import Testing

/// `private_key_jwt` (OIDC Core §9, RFC 7523 §3): the pure check of a client assertion, each
/// step broken alone, and the check of a JWK Set as a client registers it.
@Suite struct ClientAssertionTests {
    static let now: Int64 = 1_800_000_000
    static let endpoint = "https://signet.test/oauth/token"
    static let audiences = ["https://signet.test", endpoint]

    static func claims(_ edit: (inout JSONObject) -> Void = { _ in }) -> JSONObject {
        var claims: JSONObject = ["iss": .string("svc"), "sub": .string("svc"), "aud": .string(endpoint), "iat": .number(String(now)),
                                  "exp": .number(String(now + 60)), "jti": .string("j-1")]
        edit(&claims)
        return claims
    }

    static func verify(_ jwt: String, keys: [JSONObject]) -> Result<ClientAssertion.Verified, ClientAssertion.Invalid> {
        Result { () throws(ClientAssertion.Invalid) in try ClientAssertion.verify(jwt, clientID: "svc", keys: keys, audiences: audiences, now: now) }
    }

    @Test("each algorithm verifies with its registered key, and the set of such a key passes registration", arguments: ClientAssertion.algorithms)
    func algorithms(_ alg: String) throws {
        let key = try SoftwareClientKey(algorithm: alg, kid: "k-\(alg)")
        let registered = try JWKSet.keys(key.jwks)
        let jwt = try key.sign(header: ["alg": .string(alg), "kid": .string(key.kid)], claims: Self.claims())
        let verified = try Self.verify(jwt, keys: registered).get()
        #expect(verified.jti == "j-1" && verified.exp == Self.now + 60)
        // Without a kid, each key of the algorithm's type is tried.
        let other = try SoftwareClientKey(algorithm: alg, kid: "other")
        let unnamed = try key.sign(header: ["alg": .string(alg)], claims: Self.claims())
        #expect((try? Self.verify(unnamed, keys: [other.jwk, key.jwk]).get()) != nil)
    }

    @Test("accepted at the edges: aud as a list naming the issuer, exp within the leeway, typ client-authentication+jwt, a fractional exp")
    func edges() throws {
        let key = try SoftwareClientKey(kid: "k")
        let header: JSONObject = ["alg": .string("ES256"), "kid": .string("k"), "typ": .string("client-authentication+jwt")]
        for claims in [
            Self.claims { $0["aud"] = .array([.string("https://elsewhere.test"), .string("https://signet.test")]) },
            Self.claims { $0["exp"] = .number(String(Self.now - 59)) },
            Self.claims { $0["exp"] = .number(String(Self.now + ClientAssertion.maxLifetime + 59)) },
            Self.claims { $0["exp"] = .number("\(Self.now + 30).5"); $0["nbf"] = .number(String(Self.now + 59)); $0["iat"] = nil },
        ] {
            #expect((try? Self.verify(key.sign(header: header, claims: claims), keys: [key.jwk]).get()) != nil, "\(JSONValue.object(claims).serialized)")
        }
    }

    @Test("every step refuses alone, with the step in its detail")
    func refusals() throws {
        let key = try SoftwareClientKey(kid: "k")
        let other = try SoftwareClientKey(kid: "k")
        let ed = try SoftwareClientKey(algorithm: "EdDSA", kid: "e")
        let header: JSONObject = ["alg": .string("ES256"), "kid": .string("k")]
        func signed(_ header: JSONObject = header, by signer: SoftwareClientKey? = nil, _ edit: (inout JSONObject) -> Void = { _ in }) throws -> String {
            try (signer ?? key).sign(header: header, claims: Self.claims(edit))
        }
        func with(_ change: (inout JSONObject) -> Void) -> JSONObject {
            var copy = header
            change(&copy)
            return copy
        }
        let good = try signed()
        let parts = good.split(separator: ".").map(String.init)
        let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
        let tampered = parts[0] + "." + Base64URL.encode(JSONValue.object(Self.claims { $0["sub"] = .string("svc ") }).serializedBytes) + "." + parts[2]
        let cases: [(String, String, String)] = [
            ("longer than 8 KiB", try signed { $0["pad"] = .string(String(repeating: "a", count: 8200)) }, "longer than 8192"),
            ("two parts", parts[0] + "." + parts[1], "not a compact JWS"),
            ("a header that is not JSON", Base64URL.encode(Array("{alg".utf8)) + "." + parts[1] + "." + parts[2], "not JSON objects"),
            ("crit", try signed(with { $0["crit"] = .array([.string("exp")]) }), "crit"),
            ("a DPoP proof's typ", try signed(with { $0["typ"] = .string("dpop+jwt") }), "typ dpop+jwt"),
            ("a logout token's typ", try signed(with { $0["typ"] = .string("logout+jwt") }), "typ logout+jwt"),
            ("alg none", unsigned, "alg none"),
            ("alg HS256", try signed(with { $0["alg"] = .string("HS256") }), "alg HS256"),
            ("an unknown kid", try signed(with { $0["kid"] = .string("gone") }), "no registered key has kid gone"),
            ("no key of the algorithm's type", try signed(["alg": .string("EdDSA")], by: ed), "no registered key is for EdDSA"),
            ("another key under the registered kid", try signed(by: other), "does not verify"),
            ("claims changed after signing", tampered, "does not verify"),
            ("iss of another client", try signed { $0["iss"] = .string("other") }, "iss is not"),
            ("no iss", try signed { $0["iss"] = nil }, "iss is not"),
            ("sub of another client", try signed { $0["sub"] = .string("other") }, "sub is not"),
            ("sub as a number", try signed { $0["sub"] = .number("1") }, "sub is not"),
            ("aud elsewhere", try signed { $0["aud"] = .string("https://signet.test/oauth/revoke") }, "aud names neither"),
            ("no aud", try signed { $0["aud"] = nil }, "aud names neither"),
            ("no exp", try signed { $0["exp"] = nil }, "no exp"),
            ("exp as a string", try signed { $0["exp"] = .string(String(Self.now + 60)) }, "no exp"),
            ("expired past the leeway", try signed { $0["exp"] = .number(String(Self.now - 61)) }, "expired 61 s ago"),
            ("exp too far ahead", try signed { $0["exp"] = .number(String(Self.now + ClientAssertion.maxLifetime + 61)) }, "at most 3600"),
            ("nbf in the future", try signed { $0["nbf"] = .number(String(Self.now + 61)) }, "nbf"),
            ("iat in the future", try signed { $0["iat"] = .number(String(Self.now + 61)) }, "iat"),
            ("no jti", try signed { $0["jti"] = nil }, "no jti"),
            ("an empty jti", try signed { $0["jti"] = .string("") }, "no jti"),
            ("a jti over 256 bytes", try signed { $0["jti"] = .string(String(repeating: "j", count: 257)) }, "no jti"),
        ]
        #expect((try? Self.verify(good, keys: [key.jwk]).get()) != nil)
        for (name, jwt, detail) in cases {
            switch Self.verify(jwt, keys: [key.jwk]) {
            case .success: Issue.record("\(name): accepted")
            case .failure(let invalid): #expect(invalid.detail.contains(detail), "\(name): \(invalid.detail)")
            }
        }
    }

    @Test("a JWK Set is refused with a private member, another use, a kid twice, an alg that does not fit, a short RSA key, or too many keys")
    func keySets() throws {
        let ec = try SoftwareClientKey(kid: "a").jwk
        let rsa = try SoftwareClientKey(algorithm: "RS256", kid: "r").jwk
        func set(_ keys: [JSONObject]) -> JSONValue { .object(["keys": .array(keys.map(JSONValue.object))]) }
        func edited(_ jwk: JSONObject, _ change: (inout JSONObject) -> Void) -> JSONObject {
            var copy = jwk
            change(&copy)
            return copy
        }
        let short = edited(rsa) { $0["n"] = .string(Base64URL.encode([0xc1] + Array(repeating: 0x55, count: 127))) }
        let cases: [(String, JSONValue, String)] = [
            ("not a set", .object(["kty": .string("EC")]), "keys"),
            ("an empty set", set([]), "1 to 10"),
            ("eleven keys", set((0..<11).map { n in edited(ec) { $0["kid"] = .string("k\(n)") } }), "1 to 10"),
            ("an EC private key", set([edited(ec) { $0["d"] = .string("AAAA") }]), "private member d"),
            ("an RSA private key", set([edited(rsa) { $0["p"] = .string("AAAA") }]), "private member p"),
            ("use enc", set([edited(ec) { $0["use"] = .string("enc") }]), "use must be sig"),
            ("a kid twice", set([ec, edited(rsa) { $0["kid"] = .string("a") }]), "used twice"),
            ("RS256 on an EC key", set([edited(ec) { $0["alg"] = .string("RS256") }]), "does not fit"),
            ("HS256", set([["kty": .string("oct"), "k": .string("c2VjcmV0"), "alg": .string("HS256")]]), "does not fit"),
            ("a point off the curve", set([edited(ec) { $0["y"] = .string(Base64URL.encode(Array(repeating: 1, count: 32))) }]), "P-256"),
            ("a 1024-bit RSA key", set([short]), "RSA public key of 2048"),
        ]
        #expect(try JWKSet.keys(set([ec, rsa])).count == 2)
        for (name, value, detail) in cases {
            do {
                _ = try JWKSet.keys(value)
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.detail.contains(detail), "\(name): \(error.detail)")
            }
        }
    }

    @Test("the issuer of an assertion is read without verifying it; anything else reads as none")
    func issuer() throws {
        let jwt = try SoftwareClientKey().assertion(clientID: "svc", audience: Self.endpoint)
        #expect(ClientAssertion.issuer(of: jwt) == "svc")
        #expect(ClientAssertion.issuer(of: "a.b") == nil && ClientAssertion.issuer(of: "x.!!.y") == nil)
        #expect(ClientAssertion.issuer(of: String(repeating: "a", count: 9000)) == nil)
    }
}
