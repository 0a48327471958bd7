import Foundation
import SignetAuth
import SignetCurl
import SignetHTTP
import SignetServer
import SignetTestSupport
import SignetWebAuthn
import Synchronization
import Testing

/// A Metadata Service of the test's own: `GET /` answers what the test sets, and counts.
final class BLOBServer: HTTPHandler {
    let answer = Mutex<(status: Int, headers: [(String, String)], body: [UInt8])>((200, [], []))
    let requests = Mutex(0)
    /// Other paths' answers (a revocation list, a 404), by path.
    let files = Mutex<[String: (status: Int, body: [UInt8])]>([:])

    func serve(_ body: [UInt8]) { answer.withLock { $0 = (200, [("Content-Type", "application/jose")], body) } }
    func serve(_ path: String, status: Int = 200, _ body: [UInt8]) { files.withLock { $0[path] = (status, body) } }
    func fail(_ status: Int) { answer.withLock { $0 = (status, [], []) } }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        requests.withLock { $0 += 1 }
        // A service that moved: `/old` sends to `/`, `/loop` to itself.
        if request.path == "/old" { return HTTPResponse(status: 302, headers: [("Location", "/")], body: []) }
        if request.path == "/loop" { return HTTPResponse(status: 302, headers: [("Location", "/loop")], body: []) }
        if let file = files.withLock({ $0[request.path] }) { return HTTPResponse(status: file.status, headers: [("Content-Type", "application/pkix-crl")], body: file.body) }
        let (status, headers, body) = answer.withLock { $0 }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    var count: Int { requests.withLock { $0 } }
}

/// `attestation_metadata.url`: each server fetches the FIDO Metadata Service's BLOB itself
/// (MDS 3.0 §3.2) into `blob_file`, at a first start and then daily, and puts a newer BLOB that
/// verifies in force; whatever else it is served leaves the file and the BLOB in force alone.
@Suite struct MetadataFetchTests {
    static let key = AttestationMetadataTests.key
    let service: TestMetadataService
    let vendor: TestAttestationRoot
    let blobs = BLOBServer()
    let listener: HTTPServer
    let url: String
    let root: String

    init() throws {
        service = try TestMetadataService()
        vendor = try TestAttestationRoot(name: "Signet Test Key Vendor")
        (listener, url) = try startLoopbackServer(blobs)
        root = try service.rootFile(in: Scratch.directory)
    }

    /// BLOB no. `number`, listing the test key under the vendor's root with `statuses`.
    func blob(_ number: Int, statuses: [(status: String, effectiveDate: String?)] = [("FIDO_CERTIFIED_L1", "2024-01-10")],
              signer: TestMetadataService? = nil) throws -> [UInt8] {
        let models = [TestMetadataService.Model(aaguid: Self.key, description: "Signet Test Key", roots: [vendor.certificate], statuses: statuses)]
        return try (signer ?? service).blob(TestMetadataService.payload(number: number, models: models))
    }

    /// A folder of its own, and where the BLOB is kept in it.
    static func blobFile() throws -> (folder: URL, file: String) {
        let folder = Scratch.directory.appendingPathComponent("mds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("mds.jwt").path)
    }

    /// Whether `file` holds exactly `bytes` (a Bool, so a failure does not print a few KiB).
    static func holds(_ file: String, _ bytes: [UInt8]) -> Bool {
        FileManager.default.contents(atPath: file).map { [UInt8]($0) } == bytes
    }

    func server(blobFile: String, path: String = "/", sharing: URL? = nil, upkeep: TimeInterval = 60) throws -> TestServer {
        try TestServer.withOperators(sharing: sharing, upkeep: upkeep) { c in
            (c.attestationMetadataFile, c.attestationMetadataRootFile, c.attestationMetadataURL) = (blobFile, root, url + path)
        }
    }

    @Test("a first start without blob_file fetches the BLOB, keeps it there and puts it in force; the next fetch is due a day later")
    func firstStart() throws {
        defer { listener.stop() }
        let served = try blob(42)
        blobs.serve(served)
        let (_, file) = try Self.blobFile()
        let live = try server(blobFile: file)
        #expect(blobs.count == 1)
        #expect(Self.holds(file, served), "the served bytes are kept as they came")
        let phone = Phone(live, settings: AttestationMetadataTests.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "fetched@signet.test", tamper: vendor.packed)
        #expect(jwtClaims(try phone.exchange(session: session, credential: credential).json["access_token"]?.string)["acr"] == .string("phrh"))
        let metrics = String(decoding: try live.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_attestation_metadata_number 42\n") && metrics.contains("signet_attestation_metadata_fetches_total{outcome=\"loaded\"} 0\n"), "\(metrics)")
        // A mirror's credentials in the URL never reach the log.
        #expect(SignetApp.shownURL("https://reader:s3cret@mds.example/blob?token=t0k3n#x") == "https://mds.example/blob")
        // Not due again until a day has passed; then the same BLOB changes nothing.
        #expect(live.app.fetchAttestationMetadataIfDue(now: Date().addingTimeInterval(86_000)) == nil && blobs.count == 1)
        #expect(live.app.fetchAttestationMetadataIfDue(now: Date().addingTimeInterval(86_500)) == .unchanged(42) && blobs.count == 2)
    }

    @Test("the minute's purge and key rotation never wait on the Metadata Service: the fetch and the file's reload are the metadata minute's, on a queue of its own")
    func minuteQueues() throws {
        defer { listener.stop() }
        let (_, file) = try Self.blobFile()
        try Data(try blob(42)).write(to: URL(fileURLWithPath: file))
        let live = try server(blobFile: file)
        blobs.serve(try blob(43))
        // A fetch is due (none yet since the start); the upkeep does not make it.
        live.app.minuteOfUpkeep(now: Date())
        #expect(blobs.count == 0 && live.app.service.ceremonies.metadata?.number == 42)
        live.app.minuteOfMetadata(now: Date())
        #expect(blobs.count == 1 && live.app.service.ceremonies.metadata?.number == 43)
        // A BLOB moved into the file: the metadata minute reads it, the upkeep does not.
        try Data(try blob(44)).write(to: URL(fileURLWithPath: file), options: .atomic)
        live.app.minuteOfUpkeep(now: Date())
        #expect(live.app.service.ceremonies.metadata?.number == 43)
        live.app.minuteOfMetadata(now: Date())
        #expect(live.app.service.ceremonies.metadata?.number == 44 && blobs.count == 1, "read from the file; the next fetch is a day away")
    }

    @Test("the app's own metadata timer fetches a BLOB that is due and puts in force one moved into the file, with nobody calling it")
    func minuteTimer() throws {
        defer { listener.stop() }
        let (_, file) = try Self.blobFile()
        try Data(try blob(42)).write(to: URL(fileURLWithPath: file))
        blobs.serve(try blob(43))
        // The timer every 50 ms instead of every minute. A fetch is due: none since the start.
        let live = try server(blobFile: file, upkeep: 0.05)
        #expect(eventually { live.app.service.ceremonies.metadata?.number == 43 })
        try Data(try blob(44)).write(to: URL(fileURLWithPath: file), options: .atomic)
        #expect(eventually { live.app.service.ceremonies.metadata?.number == 44 })
        #expect(blobs.count == 1, "the next fetch is a day away")
    }

    @Test("a first start stops when the BLOB cannot be fetched or does not verify, naming why, and writes no file")
    func firstStartRefused() throws {
        defer { listener.stop() }
        let stranger = try TestMetadataService()
        let cases: [(String, () throws -> Void)] = [
            ("answered 404", { blobs.fail(404) }),
            ("(chain)", { blobs.serve(try blob(42, signer: stranger)) }),
            ("(jws)", { blobs.serve(Array("not a BLOB".utf8)) }),
        ]
        for (message, serve) in cases {
            try serve()
            let (_, file) = try Self.blobFile()
            do {
                _ = try server(blobFile: file)
                Issue.record("started with \(message)")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("does not exist yet") && error.message.contains(message), "\(error.message)")
            }
            #expect(!FileManager.default.fileExists(atPath: file), "\(message)")
        }
        // Nobody listening: the network's error.
        let (_, file) = try Self.blobFile()
        do {
            _ = try TestServer { c in (c.attestationMetadataFile, c.attestationMetadataRootFile, c.attestationMetadataURL) = (file, root, "http://127.0.0.1:9/mds") }
            Issue.record("started without the service")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("curl"), "\(error.message)")
        }
    }

    @Test("a running server puts a newer BLOB in force and keeps it in the file; the same, an older, a foreign or a failed answer leaves both alone, is logged and counted, and is tried again within the hour")
    func running() throws {
        defer { listener.stop() }
        let (_, file) = try Self.blobFile()
        try Data(try blob(42)).write(to: URL(fileURLWithPath: file))
        let live = try server(blobFile: file, path: "/?token=t0k3n")
        #expect(blobs.count == 0, "a start with the file does not wait on the network")
        let phone = Phone(live, settings: AttestationMetadataTests.securityKey(Self.key))
        let (session, credential) = try phone.startSignUp(email: "running@signet.test", tamper: vendor.packed)
        #expect(try phone.exchange(session: session, credential: credential).status == 200)
        let now = Date()
        // The same BLOB: nothing changes, not even the file.
        blobs.serve(try blob(42))
        let before = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
        #expect(live.app.fetchAttestationMetadataIfDue(now: now) == .unchanged(42))
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int == before)
        // A newer one reports the model compromised: written, in force, its sign-ins stop.
        let newer = try blob(43, statuses: [("USER_KEY_REMOTE_COMPROMISE", "2025-02-01")])
        blobs.serve(newer)
        #expect(live.app.fetchAttestationMetadata(now: now) == .loaded(43))
        #expect(Self.holds(file, newer))
        let (start, signed, _) = try phone.startSignIn(username: "running@signet.test")
        #expect(AuthenticatorPolicyTests.isRefusal(try phone.exchange(session: start, credential: signed)))
        // Whatever else is served leaves BLOB no. 43 in the file and in force.
        let refusals: [(String, () throws -> Void, String)] = [
            ("older", { blobs.serve(try blob(41)) }, "older than no. 43"),
            ("foreign", { blobs.serve(try blob(44, signer: try TestMetadataService())) }, "(chain)"),
            ("down", { blobs.fail(503) }, "answered 503"),
        ]
        for (name, serve, detail) in refusals {
            try serve()
            let outcome = live.app.fetchAttestationMetadata(now: now)
            switch outcome {
            case .refused(let why) where ["older", "foreign"].contains(name), .failed(let why) where name == "down":
                #expect(why.contains(detail), "\(name): \(why)")
            default:
                Issue.record("\(name): \(String(describing: outcome))")
            }
            #expect(Self.holds(file, newer), "\(name)")
        }
        #expect(live.app.service.ceremonies.metadata?.number == 43)
        // After a failure the next try is an hour away, not a day.
        #expect(live.app.fetchAttestationMetadataIfDue(now: now.addingTimeInterval(3_000)) == nil)
        blobs.serve(newer)
        #expect(live.app.fetchAttestationMetadataIfDue(now: now.addingTimeInterval(3_700)) == .unchanged(43))
        live.app.server.log.flush()
        let log = try String(contentsOf: live.logFile, encoding: .utf8)
        #expect(log.contains("attestation metadata fetched") && log.contains("attestation metadata fetch refused; the BLOB in force stays")
                && log.contains("attestation metadata fetch failed; the BLOB in force stays") && log.contains("answered 503"), "\(log.suffix(1200))")
        #expect(!log.contains("t0k3n"), "the URL's query is not logged")
        let metrics = String(decoding: try live.get("/metrics").body, as: UTF8.self)
        for (outcome, count) in [("loaded", 1), ("unchanged", 2), ("refused", 2), ("failed", 1)] {
            #expect(metrics.contains("signet_attestation_metadata_fetches_total{outcome=\"\(outcome)\"} \(count)\n"), "\(outcome): \(metrics)")
        }
        #expect(metrics.contains("signet_attestation_metadata_number 43\n"))
        #expect(!String(decoding: try TestServer().get("/metrics").body, as: UTF8.self).contains("fetches_total"), "no series without a url")
    }

    @Test("a start whose blob_file holds no BLOB that verifies fetches a new one; when that fails too, the start stops naming both")
    func damagedFile() throws {
        defer { listener.stop() }
        let (_, file) = try Self.blobFile()
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: file))
        blobs.fail(503)
        do {
            _ = try server(blobFile: file)
            Issue.record("started with a damaged file")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("is refused") && error.message.contains("(jws)") && error.message.contains("answered 503"), "\(error.message)")
        }
        #expect(Self.holds(file, Array("damaged".utf8)), "a failed fetch leaves the file alone")
        let served = try blob(42)
        blobs.serve(served)
        let live = try server(blobFile: file)
        #expect(live.app.service.ceremonies.metadata?.number == 42 && Self.holds(file, served))
        // A file that verifies is used as it is, without waiting on the network.
        let before = blobs.count
        _ = try server(blobFile: file)
        #expect(blobs.count == before)
    }

    @Test("a BLOB older than one this deployment has seen is not fetched into the file nor put in force (MDS 3.0 §3.1.7): a start whose file is behind fetches, and stops when the service is behind too; a running server refuses it, logs and counts it")
    func olderThanSeen() throws {
        defer { listener.stop() }
        blobs.serve(try blob(42))
        let (_, firstFile) = try Self.blobFile()
        let first = try server(blobFile: firstFile)
        // Another instance, its file and the service both one BLOB behind: it does not start, and
        // its file is left as it was.
        let (_, file) = try Self.blobFile()
        let behind = try blob(41)
        try Data(behind).write(to: URL(fileURLWithPath: file))
        blobs.serve(behind)
        do {
            _ = try server(blobFile: file, sharing: first.directory)
            Issue.record("started with BLOB no. 41 after no. 42 was seen")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("is refused (BLOB no. 41 is older than no. 42") && error.message.contains("served BLOB no. 41 is older than no. 42"), "\(error.message)")
        }
        #expect(Self.holds(file, behind))
        // The service catches up: the start fetches no. 42 over the file's no. 41.
        let current = try blob(42)
        blobs.serve(current)
        let second = try server(blobFile: file, sharing: first.directory)
        #expect(second.app.service.ceremonies.metadata?.number == 42 && Self.holds(file, current))
        // The first fetches no. 44; the second is then served no. 43, newer than its own but older
        // than one seen: refused, the file and no. 42 in force left alone.
        blobs.serve(try blob(44))
        #expect(first.app.fetchAttestationMetadata(now: Date()) == .loaded(44))
        blobs.serve(try blob(43))
        guard case .refused(let why) = second.app.fetchAttestationMetadata(now: Date()) else { Issue.record("not refused"); return }
        #expect(why.contains("served BLOB no. 43 is older than no. 44, which this deployment has seen already"), "\(why)")
        #expect(Self.holds(file, current) && second.app.service.ceremonies.metadata?.number == 42)
        let metrics = String(decoding: try second.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("signet_attestation_metadata_fetches_total{outcome=\"refused\"} 1\n"), "\(metrics)")
    }

    @Test("a service that moved is followed, three redirects at most: the BLOB proves itself by its signature")
    func redirects() throws {
        defer { listener.stop() }
        blobs.serve(try blob(42))
        let (_, file) = try Self.blobFile()
        let live = try server(blobFile: file, path: "/old")
        #expect(live.app.service.ceremonies.metadata?.number == 42 && blobs.count == 2)
        let (_, looping) = try Self.blobFile()
        do {
            _ = try server(blobFile: looping, path: "/loop")
            Issue.record("started through a redirect loop")
        } catch let error as ConfigurationError {
            #expect(error.message.contains("curl 47"), "\(error.message)")
        }
        #expect(blobs.count == 6, "the first request and three redirects")
    }

    @Test("a BLOB that cannot be written to blob_file is not put in force: a restart would not have it")
    func unwritable() throws {
        defer { listener.stop() }
        let (folder, file) = try Self.blobFile()
        try Data(try blob(42)).write(to: URL(fileURLWithPath: file))
        let live = try server(blobFile: file)
        try FileManager.default.removeItem(at: folder)
        blobs.serve(try blob(43))
        guard case .failed(let why) = live.app.fetchAttestationMetadata(now: Date()) else { Issue.record("not failed"); return }
        #expect(why.contains("cannot write attestation_metadata.blob_file"), "\(why)")
        #expect(live.app.service.ceremonies.metadata?.number == 42)
    }

    @Test("signet doctor fetches the url as a server does: it passes with the number served and the file's, fails an older one, fails with the fix otherwise, and fails a folder the servers cannot write")
    func doctor() throws {
        defer { listener.stop() }
        let (folder, file) = try Self.blobFile()
        try Data(try blob(42)).write(to: URL(fileURLWithPath: file))
        var configuration = TestServer.configuration()
        configuration.attestation = "direct"
        (configuration.attestationMetadataFile, configuration.attestationMetadataRootFile, configuration.attestationMetadataURL) = (file, root, url + "/")
        let doctor = Doctor(configuration: configuration, options: HTTPSOptions())
        blobs.serve(try blob(43))
        let passed = doctor.metadataURLCheck().first
        #expect(passed?.status == .pass && passed?.detail.contains("serves BLOB no. 43") == true && passed?.detail.contains("blob_file holds no. 42") == true
                && passed?.detail.hasSuffix("its signing chain names no revocation list to check") == true, "\(passed?.detail ?? "none")")
        blobs.serve(try blob(41))
        let older = doctor.metadataURLCheck().first
        #expect(older?.status == .fail && older?.detail.contains("older than no. 42 in blob_file") == true, "\(older?.detail ?? "none")")
        blobs.fail(404)
        let failed = doctor.metadataURLCheck().first
        #expect(failed?.status == .fail && failed?.detail.contains("answered 404") == true && failed?.fix?.contains("mds3.fidoalliance.org") == true)
        #expect(doctor.configurationChecks().first { $0.name == "attestation_metadata.blob_file" } == nil)
        // A folder the servers cannot write to (here: gone) fails, with the fix.
        try FileManager.default.removeItem(at: folder)
        let unwritable = doctor.configurationChecks().first { $0.name == "attestation_metadata.blob_file" }
        #expect(unwritable?.status == .fail && unwritable?.fix?.contains("write that folder") == true)
        #expect(Doctor(configuration: TestServer.configuration(), options: HTTPSOptions()).metadataURLCheck().isEmpty)
    }
}
