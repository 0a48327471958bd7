import SignetAPI
import SignetAuth

/// `signet admin users sessions ID [--from CURSOR] [--take N]`: an account's live sessions a
/// page at a time, as `GET /api/v2/users/{id}/sessions` pages them, for an account signed in
/// on more devices than `users show` lists.
extension Admin {
    func listSessions(_ id: String) throws {
        let take = try Admin.integer(options.one("--take"), "--take", default: 100)
        let page = try ceremonies.sessions(userID: id, from: options.one("--from"), take: take)
        if options.json { return try emit(page) }
        print(Self.sessionTable(page.sessions))
        if let next = page.next {
            let size = options.one("--take") == nil ? "" : " --take \(take)"
            print("(\(page.sessions.count) session(s); the next page: signet admin users sessions \(Self.printable(id))\(size) --from \(next))")
        } else {
            print("(\(page.sessions.count) session(s); the last page)")
        }
    }

    /// The sessions as `users show` and `users sessions` print them: browsers' then apps',
    /// where each signed in from, when, and until when.
    static func sessionTable(_ sessions: [ManagementSession]) -> String {
        table(["SESSION", "KIND", "CLIENT OR BROWSER", "FROM", "SIGNED IN", "LAST SEEN", "EXPIRES"], sessions.map {
            [$0.id, $0.kind, $0.clients.first?.client_id ?? Ceremonies.browserName($0.device?.initial_user_agent), printable($0.device?.initial_ip ?? "-"),
             $0.authenticated_at, $0.last_interacted_at, $0.idle_expires_at ?? $0.expires_at]
        })
    }
}
