import SignetCrypto

extension AttestationContext {
    /// §8.4 Android Key.
    func verifyAndroidKey() throws(WebAuthnError) -> Outcome {
        let section = "8.4"
        let alg = try algorithm(section)
        let sig = try signature(section)
        let chain = try certificates(section)
        let cert = chain[0]
        // The signature over authenticatorData || clientDataHash verifies with the leaf's key.
        try verify(sig, over: signedData, by: cert, alg: alg, section)
        // The leaf's public key is the credential public key.
        try checkCredentialKey(matches: cert, section)
        guard let ext = cert.extension("1.3.6.1.4.1.11129.2.1.17") else {
            throw invalid("android-key certificate lacks the key description extension", section)
        }
        let description: AndroidKeyDescription
        do {
            description = try AndroidKeyDescription(ext.value)
        } catch {
            throw invalid("android-key key description is malformed: \(error)", section)
        }
        // attestationChallenge is clientDataHash.
        guard ConstantTime.equals(description.attestationChallenge, clientDataHash) else {
            throw invalid("android-key attestationChallenge is not the clientDataHash", section)
        }
        // No allApplications in either list: the key must be scoped to this RP's app.
        guard !description.softwareEnforced.allApplications, !description.teeEnforced.allApplications else {
            throw invalid("android-key key is usable by all applications", section)
        }
        // origin = KM_ORIGIN_GENERATED and purpose includes KM_PURPOSE_SIGN, in teeEnforced or
        // (unless the policy wants TEE keys only) the union with softwareEnforced.
        let lists = policy.androidKeyRequireTEE ? [description.teeEnforced] : [description.teeEnforced, description.softwareEnforced]
        guard lists.contains(where: { $0.origin == 0 }) else {
            throw invalid("android-key origin is not KM_ORIGIN_GENERATED", section)
        }
        guard lists.contains(where: { $0.purposes.contains(2) }) else {
            throw invalid("android-key purpose does not include KM_PURPOSE_SIGN", section)
        }
        return Outcome(type: .basic, chain: chain)
    }
}

/// The Android key attestation extension's `KeyDescription`, as far as WebAuthn §8.4 needs it.
struct AndroidKeyDescription {
    struct AuthorizationList {
        var purposes: [Int64] = []
        var origin: Int64?
        var allApplications = false
    }

    let attestationChallenge: ArraySlice<UInt8>
    let softwareEnforced: AuthorizationList
    let teeEnforced: AuthorizationList

    init(_ der: [UInt8]) throws {
        var outer = DERReader(der)
        var seq = try outer.read(DERTag.sequence).children
        guard outer.isAtEnd else { throw CryptoError(.invalidEncoding, "trailing bytes") }
        _ = try seq.readInt()  // attestationVersion
        _ = try seq.readInt(DERTag.enumerated)  // attestationSecurityLevel
        _ = try seq.readInt()  // keymasterVersion
        _ = try seq.readInt(DERTag.enumerated)  // keymasterSecurityLevel
        attestationChallenge = try seq.read(DERTag.octetString).content
        _ = try seq.read(DERTag.octetString)  // uniqueId
        softwareEnforced = try Self.list(seq.read(DERTag.sequence))
        teeEnforced = try Self.list(seq.read(DERTag.sequence))
    }

    static func list(_ element: DERElement) throws -> AuthorizationList {
        var list = AuthorizationList()
        var reader = element.children
        while !reader.isAtEnd {
            let item = try reader.read()
            guard item.tagClass == .contextSpecific else { continue }
            var inner = item.children
            switch item.number {
            case 1:  // purpose [1] EXPLICIT SET OF INTEGER
                var set = try inner.read(DERTag.set).children
                while !set.isAtEnd { list.purposes.append(try set.readInt()) }
            case 600:  // allApplications [600] EXPLICIT NULL
                list.allApplications = true
            case 702:  // origin [702] EXPLICIT INTEGER
                list.origin = try inner.readInt()
            default: break
            }
        }
        return list
    }
}
