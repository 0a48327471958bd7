import SignetAPI
import SignetAuth

/// `signet admin stats`: what `/api/v2/stats` says.
extension Admin {
    func stats() throws {
        let daily = try ceremonies.dailyStats(from: options.one("--from"), to: options.one("--to"))
        let active = try ceremonies.activeUsers()
        if options.json {
            struct Stats: Encodable { let active_users: Int; let daily: [DailyStats] }
            return try emit(Stats(active_users: active, daily: daily))
        }
        print("accounts active in the last 30 days: \(active)")
        print(Self.table(["DAY", "SIGN-INS", "SIGN-UPS"], daily.map { [String($0.date.prefix(10)), String($0.logins), String($0.signups)] }))
        print("\(daily.map(\.logins).reduce(0, +)) sign-in(s), \(daily.map(\.signups).reduce(0, +)) sign-up(s) in \(daily.count) day(s)")
    }
}
