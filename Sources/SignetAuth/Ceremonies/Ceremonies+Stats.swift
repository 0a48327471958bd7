import Foundation
public import SignetAPI

/// `/api/v2/stats` (Auth0's): figures from the audit trail and the accounts.
extension Ceremonies {
    /// The events counted as sign-ins: by passkey (also on the hosted pages), email code,
    /// recovery code and an approved device; a step-up is no new sign-in.
    static let loginKinds: [AuditKind] = [.signIn, .otpSignIn, .recoveryCodeSignIn, .deviceSignIn]
    /// The events counted as sign-ups: an account made by its owner, with a passkey or a code.
    static let signupKinds: [AuditKind] = [.signUp, .otpSignUp]
    /// The longest range one call counts, in days.
    static let statsDays = 366

    /// `GET /api/v2/stats/daily?from=YYYYMMDD&to=YYYYMMDD` (both inclusive, UTC; by default the
    /// last 30 days to today): each day's sign-ins and sign-ups, every day of the range, oldest
    /// first. Days older than the audit retention (`audit.retention_days`) count what is left.
    public func dailyStats(from: String?, to: String?) throws -> [DailyStats] {
        let today = nowMillis / 86_400_000
        let last = try to.map { try Self.day($0, "to") } ?? today
        let first = try from.map { try Self.day($0, "from") } ?? last - 29
        guard first <= last else { throw AuthError.malformed("from must be on or before to") }
        guard last - first < Int64(Self.statsDays) else { throw AuthError.malformed("a range of at most \(Self.statsDays) days") }
        let counts = try store.dailyEventCounts(from: first * 86_400_000, to: (last + 1) * 86_400_000,
                                                kinds: (Self.loginKinds + Self.signupKinds).map(\.rawValue))
        let byDay = Dictionary(grouping: counts, by: \.day)
        let logins = Set(Self.loginKinds.map(\.rawValue))
        return (first...last).map { day in
            let rows = byDay[day] ?? []
            return DailyStats(date: Self.iso(day * 86_400_000), logins: rows.filter { logins.contains($0.kind) }.reduce(0) { $0 + $1.count },
                              signups: rows.filter { !logins.contains($0.kind) }.reduce(0) { $0 + $1.count },
                              created_at: rows.map(\.first).min().map(Self.iso), updated_at: rows.map(\.last).max().map(Self.iso))
        }
    }

    /// `GET /api/v2/stats/active-users`: accounts signed in during the last 30 days.
    public func activeUsers() throws -> Int { try store.activeUsers(since: nowMillis - 30 * 86_400_000) }

    /// A `YYYYMMDD` day as days since 1970-01-01 (Gregorian, UTC); a day that does not exist
    /// (20260230) is refused, not rolled over.
    package static func day(_ text: String, _ name: String) throws -> Int64 {
        let bad = AuthError.malformed("\(name) must be a day as YYYYMMDD")
        guard text.utf8.count == 8, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(text) else { throw bad }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let asked = DateComponents(year: number / 10_000, month: number / 100 % 100, day: number % 100)
        guard (1970...9999).contains(asked.year ?? 0), let date = calendar.date(from: asked),
              calendar.dateComponents([.year, .month, .day], from: date) == asked else { throw bad }
        return Int64(date.timeIntervalSince1970) / 86_400
    }
}
