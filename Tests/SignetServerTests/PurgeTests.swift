import Foundation
import SignetAuth
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// The minute's purge as the running app does it: what each step deleted in `/metrics`, and a
/// step that fails counted, logged by its error's code, and no reason for the others to stop.
@Suite struct PurgeTests {
    static func metric(_ text: String, _ name: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    @Test("the app's own timer runs the upkeep: used marks past their expiry are purged and a signing key that is due is rotated, with nobody calling it")
    func timer() throws {
        // The timer every 50 ms instead of every minute; the test's clock says what is due.
        let server = try TestServer(upkeep: 0.05) { $0.signingKeyRotationDays = 30 }
        let now = Int64(server.clock.now.timeIntervalSince1970 * 1000)
        for n in 0..<5 as Range<Int64> {
            #expect(try server.app.store.useSession(id: (0..<16).map { _ in UInt8.random(in: 0...255) }, expiresAt: now + 60_000 + n))
        }
        func purged() throws -> Int? {
            Self.metric(String(decoding: try server.get("/metrics").body, as: UTF8.self), "signet_purged_rows_total{what=\"used_marks\"}")
        }
        #expect(eventually { (try? purged()) == 0 }, "the timer ran, and the marks are not past their expiry")
        server.clock.advance(61)
        #expect(eventually { (try? purged()) == 5 })
        #expect(try server.store.signingKeys().count == 1)
        server.clock.advance(30 * 86_400)
        #expect(eventually { (try? server.store.signingKeys().count) == 2 }, "a new key at 30 days")
    }

    @Test("rows deleted are counted by step; a failing step is counted and logged by its code, and the steps after it still run")
    func countsAndFailures() throws {
        let server = try TestServer()
        let now = Int64(server.clock.now.timeIntervalSince1970 * 1000)
        for n in 0..<37 as Range<Int64> {
            let id = (0..<16).map { _ in UInt8.random(in: 0...255) }
            #expect(try server.app.store.useSession(id: id, expiresAt: now - 1_000 - n))
        }
        #expect(try server.app.store.useSession(id: Array(repeating: 7, count: 16), expiresAt: now + 60_000))
        server.app.purgeExpired(now: now)
        var metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(Self.metric(metrics, "signet_purged_rows_total{what=\"used_marks\"}") == 37)
        #expect(Self.metric(metrics, "signet_purged_rows_total{what=\"refresh_tokens\"}") == 0)
        #expect(Self.metric(metrics, "signet_purged_rows_total{what=\"audit_events\"}") == 0)
        #expect(!metrics.contains("signet_purge_failures_total{"))
        // The used marks' step fails once one of its tables is gone; the audit step after it
        // still runs and deletes a row past its retention (not the newest, which always stays).
        _ = try rawSQLite(server.directory.appendingPathComponent("signet.db").path, "DROP TABLE email_codes")
        try server.app.store.appendAudit(AuditEvent(at: 1, kind: "sign_in", outcome: "success"))
        try server.app.store.appendAudit(AuditEvent(at: now, kind: "sign_in", outcome: "success"))
        server.app.purgeExpired(now: now)
        metrics = String(decoding: try server.get("/metrics").body, as: UTF8.self)
        #expect(Self.metric(metrics, "signet_purge_failures_total{what=\"used_marks\"}") == 1)
        #expect(Self.metric(metrics, "signet_purged_rows_total{what=\"audit_events\"}") == 1)
        #expect(Self.metric(metrics, "signet_purged_rows_total{what=\"used_marks\"}") == 37)
        #expect(!metrics.contains("signet_purge_failures_total{what=\"audit_events\"}"))
        server.app.server.log.flush()
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        let line = try #require(log.split(separator: "\n").first { $0.contains("purge failed") })
        // The error's stable code, never SQL or a row's values.
        #expect(line.contains("\"what\":\"used_marks\"") && line.contains("\"error\":\"internal\""), "\(line)")
        #expect(try !server.app.store.useSession(id: Array(repeating: 7, count: 16), expiresAt: now + 60_000), "the live mark stays")
    }
}
