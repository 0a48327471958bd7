import Foundation
import SignetAuth
import SignetCrypto
import SignetCurl
import SignetHTTP
import SignetServer
import SignetTestSupport
import SignetWebAuthn
import Testing

/// MDS 3.0 §3.2: a fetched BLOB's signing chain is checked against the revocation lists its
/// certificates name (RFC 5280 §4.2.1.13, §6.3), fetched as the BLOB is. A revoked signer or CA
/// is refused; a list that cannot be had, or does not read, leaves the BLOB untaken until it
/// can be; either way the BLOB in force stays.
@Suite struct MetadataRevocationTests {
    static let key = AttestationMetadataTests.key
    let service: TestMetadataService
    let vendor: TestAttestationRoot
    let blobs = BLOBServer()
    let listener: HTTPServer
    let url: String
    let root: String

    init() throws {
        vendor = try TestAttestationRoot(name: "Signet Test Key Vendor")
        (listener, url) = try startLoopbackServer(blobs)
        service = try TestMetadataService(intermediate: true, revocationLists: url)
        root = try service.rootFile(in: Scratch.directory)
    }

    func blob(_ number: Int) throws -> [UInt8] {
        try service.blob(TestMetadataService.payload(number: number, models: [.init(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate])]))
    }

    /// Lists that revoke nothing, each from its certificate's issuer.
    func serveCleanLists() throws {
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true))
        blobs.serve("/intermediate.crl", try service.revocationList())
    }

    /// A server that fetched BLOB no. 42 at its start, its chain's lists clean.
    func started() throws -> TestServer {
        try serveCleanLists()
        blobs.serve(try blob(42))
        let (_, file) = try MetadataFetchTests.blobFile()
        let live = try TestServer.withOperators { c in
            (c.attestationMetadataFile, c.attestationMetadataRootFile, c.attestationMetadataURL) = (file, root, url + "/")
        }
        try #require(live.app.service.ceremonies.metadata?.number == 42)
        return live
    }

    static func refused(_ outcome: MetadataFetchOutcome?, _ words: String) -> Bool {
        if case .refused(let why) = outcome { return why.contains("(revocation)") && why.contains(words) }
        return false
    }

    static func failed(_ outcome: MetadataFetchOutcome?, _ words: String) -> Bool {
        if case .failed(let why) = outcome { return why.contains("revocation list") && why.contains(words) }
        return false
    }

    @Test("the chain's lists are fetched and checked: a clean chain is taken, a revoked signer or CA is refused and the BLOB in force stays")
    func revoked() throws {
        defer { listener.stop() }
        let live = try started()
        #expect(blobs.count == 3, "the BLOB and both lists")
        blobs.serve(try blob(43))
        // The intermediate lists the signer as revoked.
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, revoking: [7, 2]))
        let signerRevoked = live.app.fetchAttestationMetadata(now: Date())
        #expect(Self.refused(signerRevoked, "x5c[0]: certificate revoked"), "\(String(describing: signerRevoked))")
        #expect(live.app.service.ceremonies.metadata?.number == 42)
        // The root lists the intermediate.
        try serveCleanLists()
        blobs.serve("/intermediate.crl", try service.revocationList(revoking: [3]))
        let caRevoked = live.app.fetchAttestationMetadata(now: Date())
        #expect(Self.refused(caRevoked, "x5c[1]: certificate revoked"), "\(String(describing: caRevoked))")
        #expect(live.app.service.ceremonies.metadata?.number == 42)
        // Lists that name other serial numbers only.
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, revoking: [9]))
        blobs.serve("/intermediate.crl", try service.revocationList(revoking: [4]))
        #expect(live.app.fetchAttestationMetadata(now: Date()) == .loaded(43))
        live.app.server.log.flush()
        let log = try String(contentsOf: live.logFile, encoding: .utf8)
        #expect(log.contains("attestation metadata fetch refused; the BLOB in force stays") && log.contains("certificate revoked"), "each refusal is logged")
    }

    @Test("each check of a list: another key's signature, another issuer's list, past its nextUpdate, not a list, not served")
    func listChecks() throws {
        defer { listener.stop() }
        let live = try started()
        blobs.serve(try blob(43))
        func fetched() -> MetadataFetchOutcome? { live.app.fetchAttestationMetadata(now: Date()) }
        // Signed by a key that is not the issuer's.
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, key: try PrivateKey.generate(.ec(.p256))))
        let forged = fetched()
        #expect(Self.refused(forged, "x5c[0]: CRL signature failure"), "\(String(describing: forged))")
        // The root's list where the intermediate's belongs: nothing covers the signer.
        blobs.serve("/signer.crl", try service.revocationList())
        let otherIssuer = fetched()
        #expect(Self.refused(otherIssuer, "x5c[0]: unable to get certificate CRL"), "\(String(describing: otherIssuer))")
        // Past its nextUpdate: what it says may be out of date.
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, nextUpdate: Date().addingTimeInterval(-3600)))
        let expired = fetched()
        #expect(Self.refused(expired, "x5c[0]: CRL has expired"), "\(String(describing: expired))")
        // Not a list, or not served: nothing to judge, so the fetch failed (tried again within the hour).
        blobs.serve("/signer.crl", Array("not a list".utf8))
        let garbage = fetched()
        #expect(Self.failed(garbage, "not a DER revocation list"), "\(String(describing: garbage))")
        blobs.serve("/intermediate.crl", status: 404, [])
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true))
        let missing = fetched()
        #expect(Self.failed(missing, "x5c[1] cannot be had: \(url)/intermediate.crl answered 404"), "\(String(describing: missing))")
        #expect(live.app.service.ceremonies.metadata?.number == 42, "the BLOB in force stays through all of it")
        let metrics = String(decoding: try live.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_attestation_metadata_fetches_total{outcome=\"refused\"} 3\n")
                && metrics.contains("signet_attestation_metadata_fetches_total{outcome=\"failed\"} 2\n"), "\(metrics)")
        // Served again as they should be, the BLOB is taken.
        try serveCleanLists()
        #expect(fetched() == .loaded(43))
    }

    @Test("signet doctor checks the chain's lists as a server does: it says how many it checked, fails a revoked chain, and fails a list it cannot reach with the fix")
    func doctor() throws {
        defer { listener.stop() }
        let (_, file) = try MetadataFetchTests.blobFile()
        var configuration = TestServer.configuration()
        configuration.attestation = "direct"
        (configuration.attestationMetadataFile, configuration.attestationMetadataRootFile, configuration.attestationMetadataURL) = (file, root, url + "/")
        let doctor = Doctor(configuration: configuration, options: HTTPSOptions())
        try serveCleanLists()
        blobs.serve(try blob(43))
        let passed = doctor.metadataURLCheck().first
        #expect(passed?.status == .pass && passed?.detail.hasSuffix("its signing chain is not revoked (2 revocation list(s) checked)") == true, "\(passed?.detail ?? "none")")
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, revoking: [2]))
        let revoked = doctor.metadataURLCheck().first
        #expect(revoked?.status == .fail && revoked?.detail.contains("certificate revoked") == true && revoked?.fix?.contains("signing certificate is revoked") == true,
                "\(revoked?.detail ?? "none") \(revoked?.fix ?? "")")
        blobs.serve("/signer.crl", status: 503, [])
        let unreachable = doctor.metadataURLCheck().first
        #expect(unreachable?.status == .fail && unreachable?.detail.contains("signer.crl answered 503") == true
                && unreachable?.fix?.contains("reach the addresses the BLOB's signing chain names") == true, "\(unreachable?.detail ?? "none") \(unreachable?.fix ?? "")")
    }

    @Test("with blob_file and no url, signet doctor checks the file's chain against its lists: passes a clean one, fails a revoked one, notes lists it cannot reach")
    func doctorFileOnly() throws {
        defer { listener.stop() }
        let (_, file) = try MetadataFetchTests.blobFile()
        try Data(try blob(44)).write(to: URL(fileURLWithPath: file))
        var configuration = TestServer.configuration()
        configuration.attestation = "direct"
        (configuration.attestationMetadataFile, configuration.attestationMetadataRootFile) = (file, root)
        let doctor = Doctor(configuration: configuration, options: HTTPSOptions())
        try serveCleanLists()
        let passed = doctor.metadataFileRevocationCheck().first
        #expect(passed?.status == .pass && passed?.detail == "the signing chain of BLOB no. 44 in blob_file is not revoked (2 revocation list(s) checked)",
                "\(passed?.detail ?? "none")")
        #expect(blobs.count == 2, "the two lists, and no BLOB: there is no url to fetch")
        blobs.serve("/intermediate.crl", try service.revocationList(revoking: [3]))
        let revoked = doctor.metadataFileRevocationCheck().first
        #expect(revoked?.status == .fail && revoked?.detail.contains("BLOB no. 44 in blob_file: x5c[1]: certificate revoked") == true
                && revoked?.fix?.contains("fetch the BLOB again") == true, "\(revoked?.detail ?? "none")")
        blobs.serve("/signer.crl", status: 503, [])
        let unreachable = doctor.metadataFileRevocationCheck().first
        #expect(unreachable?.status == .note && unreachable?.detail.contains("signer.crl answered 503") == true, "\(unreachable?.detail ?? "none")")
        // With a url, the url check covers it (what the servers fetch), and this one says nothing.
        configuration.attestationMetadataURL = url + "/"
        #expect(Doctor(configuration: configuration, options: HTTPSOptions()).metadataFileRevocationCheck().isEmpty)
    }

    @Test("a first start whose chain is revoked does not start, and names why")
    func firstStartRevoked() throws {
        defer { listener.stop() }
        blobs.serve("/signer.crl", try service.revocationList(ofIntermediate: true, revoking: [2]))
        blobs.serve("/intermediate.crl", try service.revocationList())
        blobs.serve(try blob(42))
        let (_, file) = try MetadataFetchTests.blobFile()
        #expect {
            try TestServer.withOperators { c in
                (c.attestationMetadataFile, c.attestationMetadataRootFile, c.attestationMetadataURL) = (file, root, url + "/")
            }
        } throws: { error in "\(error)".contains("certificate revoked") }
        #expect(!FileManager.default.fileExists(atPath: file), "nothing written")
    }
}
