import SignetCrypto

extension AttestationContext {
    /// §8.7 None: an empty statement.
    func verifyNone() throws(WebAuthnError) -> Outcome {
        guard statement.count == 0 else { throw invalid("none attestation with a non-empty attStmt", "8.7") }
        return Outcome(type: .none, chain: [])
    }

    /// §8.2 Packed: x5c (basic / attca) or self attestation.
    func verifyPacked() throws(WebAuthnError) -> Outcome {
        let section = "8.2"
        let alg = try algorithm(section)
        let sig = try signature(section)
        if statement[text: "x5c"] != nil {
            let chain = try certificates(section)
            let cert = chain[0]
            try verify(sig, over: signedData, by: cert, alg: alg, section)
            try checkPackedCertificate(cert)
            try checkAAGUIDExtension(cert, "8.2.1")
            return Outcome(type: .basic, chain: chain)
        }
        // Self attestation: alg equals the credential's, signed by the credential key.
        guard alg == credentialKey.algorithm else { throw invalid("self attestation alg differs from the credential's", section) }
        guard credentialKey.verify(signature: sig, message: signedData) else {
            throw invalid("self attestation signature does not verify with the credential key", section)
        }
        return Outcome(type: .self, chain: [])
    }

    /// §8.2.1 Packed attestation statement certificate requirements.
    func checkPackedCertificate(_ cert: Certificate) throws(WebAuthnError) {
        let section = "8.2.1"
        guard cert.version == 3 else { throw invalid("attestation certificate is not X.509 v3", section) }
        let subject = cert.subject
        func value(_ oid: String) -> String? { subject.first { $0.oid == oid }?.value }
        guard let country = value("2.5.4.6"), country.count == 2, value("2.5.4.10")?.isEmpty == false,
              value("2.5.4.11") == "Authenticator Attestation", value("2.5.4.3")?.isEmpty == false
        else { throw invalid("attestation certificate subject lacks C, O, OU=\"Authenticator Attestation\" or CN", section) }
        guard !cert.isCA else { throw invalid("attestation certificate is a CA", section) }
    }

    /// §8.6 FIDO U2F.
    func verifyFIDOU2F() throws(WebAuthnError) -> Outcome {
        let section = "8.6"
        let sig = try signature(section)
        let chain = try certificates(section)
        guard chain.count == 1 else { throw invalid("fido-u2f x5c must hold exactly one certificate", section) }
        guard let certKey = try? chain[0].publicKey(), certKey.kind == .ec(.p256) else {
            throw invalid("fido-u2f attestation certificate key is not P-256", section)
        }
        guard case .ec2(.p256, let x, let y) = credentialKey.material, let attested = authData.attestedCredential else {
            throw invalid("fido-u2f credential key is not a P-256 EC2 key", section)
        }
        // verificationData = 0x00 || rpIdHash || clientDataHash || credentialId || 0x04 || x || y
        let verificationData = [0x00] + Array(authData.rpIdHash) + clientDataHash + attested.credentialID + [0x04] + x + y
        guard certKey.verify(signature: sig, message: verificationData, scheme: .ecdsa(.sha256)) else {
            throw invalid("fido-u2f signature does not verify", section)
        }
        return Outcome(type: .basic, chain: chain)
    }

    /// §8.8 Apple Anonymous.
    func verifyApple() throws(WebAuthnError) -> Outcome {
        let section = "8.8"
        let chain = try certificates(section)
        let nonce = Digest.sha256.hash(signedData)
        guard let ext = chain[0].extension("1.2.840.113635.100.8.2") else {
            throw invalid("apple certificate lacks the nonce extension 1.2.840.113635.100.8.2", section)
        }
        // Extension value: SEQUENCE { [1] EXPLICIT OCTET STRING nonce }
        var reader = DERReader(ext.value)
        guard let seq = try? reader.read(DERTag.sequence), reader.isAtEnd else { throw invalid("apple nonce extension is malformed", section) }
        var inner = seq.children
        guard let tagged = try? inner.read(), tagged.is(.contextSpecific, 1, constructed: true), inner.isAtEnd else {
            throw invalid("apple nonce extension is malformed", section)
        }
        var octetsReader = tagged.children
        guard let octets = try? octetsReader.read(DERTag.octetString), octetsReader.isAtEnd else {
            throw invalid("apple nonce extension is malformed", section)
        }
        guard ConstantTime.equals(octets.content, nonce) else { throw invalid("apple nonce does not match", section) }
        try checkCredentialKey(matches: chain[0], section)
        return Outcome(type: .anonca, chain: chain)
    }
}
